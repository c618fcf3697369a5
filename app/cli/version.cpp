#include <unistd.h>

#include <cstdio>
#include <string>

#include <opencv2/core/version.hpp>
#include <torch/version.h>

#include "commands.h"

namespace wb::cli {

std::string selfPath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "workbench-cli";
  buf[n] = '\0';
  return buf;
}

int printVersion() {
  std::printf("workbench-cli %s (LibTorch %s, OpenCV %s)\n", WB_VERSION, TORCH_VERSION, CV_VERSION);
  return 0;
}

}  // namespace wb::cli
