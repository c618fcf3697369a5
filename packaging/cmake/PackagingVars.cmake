# Names shared by packaging/ and tests/packaging/ (tests/ is configured first, so both include this).
set(WB_APP_ID io.github.speedup_workbench.Workbench)        # desktop-file id, AppStream id
set(WB_ICON_NAME speedup-workbench)                         # theme icon name (the GUI looks it up)
set(WB_PACKAGE_NAME speedup-workbench)                      # the .deb and /usr/share/doc/<name>
set(WB_ICON_SIZES 16 22 24 32 48 64 128 256 512)            # hicolor PNG sizes rendered from the SVG
set(WB_ICON_BUILD_DIR ${PROJECT_BINARY_DIR}/packaging/icons/hicolor)
