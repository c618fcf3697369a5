#error "ui must not include LibTorch or OpenCV (see README "Folder layout")"
