// plain_start: the floor under a workbench process's start: a program linked to LibTorch alone
// (no workbench code, no OpenCV, no data files) that builds a LeNet-sized net and takes one SGD
// step on a random batch of Fashion-MNIST's shape. bench_startup.sh times it against
// `workbench-cli run`, `worker`, `probe segments` and `--version` as whole processes.
//
//   plain_start [--threads N]
//
// Prints one JSON line: the wall clock (unix seconds) at main's entry (what the dynamic linker and
// the libraries' static initialisers, LibTorch's operator registration among them, took before
// it) and at the end of the first step. The caller subtracts its own clock from before the start.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <torch/torch.h>

namespace {

double unixNow() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const double atMain = unixNow();
  if (argc == 3 && std::strcmp(argv[1], "--threads") == 0) at::set_num_threads(std::atoi(argv[2]));
  torch::manual_seed(1);
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5).padding(2)), torch::nn::ReLU(),
                            torch::nn::MaxPool2d(2), torch::nn::Conv2d(6, 16, 5), torch::nn::ReLU(),
                            torch::nn::MaxPool2d(2), torch::nn::Flatten(), torch::nn::Linear(16 * 5 * 5, 120),
                            torch::nn::ReLU(), torch::nn::Linear(120, 84), torch::nn::ReLU(), torch::nn::Linear(84, 10));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  const auto x = torch::randn({64, 1, 28, 28});
  const auto y = torch::randint(0, 10, {64}, torch::kLong);
  opt.zero_grad();
  auto loss = torch::nn::functional::cross_entropy(net->forward(x), y);
  loss.backward();
  opt.step();
  const double firstStep = unixNow();
  std::printf("{\"main_unix\": %.6f, \"first_step_unix\": %.6f, \"loss\": %.5f}\n", atMain, firstStep,
              loss.item<double>());
  std::fflush(stdout);
  std::_Exit(0);  // as `workbench-cli run` leaves: no static teardown after the measurement
}
