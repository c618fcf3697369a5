#error "ui must not include LibTorch or OpenCV (see ../shared/DESIGN.md layers)"
