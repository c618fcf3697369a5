// Hosts the precompiled <torch/torch.h> that executables (-fPIE) reuse.
int main() { return 0; }
