#error "ui must not include LibTorch or OpenCV (see docs/development.md "Folder layout")"
