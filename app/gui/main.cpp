// workbench: the Speedup Workbench window. Everything but start-up lives in ui/ (wb_ui).
// Without a display (no DISPLAY / WAYLAND_DISPLAY and no QT_QPA_PLATFORM), it runs the default
// experiment headless with workbench-cli instead, so the README's first command works anywhere.
#include <QApplication>
#include <QCommandLineParser>
#include <QSocketNotifier>
#include <QTimer>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include "setup/setup_panel.h"
#include "window/main_window.h"
#include "window/theme.h"

namespace {

bool hasDisplay() {
  auto set = [](const char* v) { return std::getenv(v) && *std::getenv(v); };
  return set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM");
}

std::string selfDir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

// exec()s workbench-cli (same search as the window: $WB_CLI, beside us, the build tree, PATH).
int runHeadless(int argc, char** argv) {
  std::fprintf(stderr, "workbench: no display; running the default experiment headless with workbench-cli\n");
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("WB_CLI"); env && *env) candidates.emplace_back(env);
  candidates.push_back(selfDir() + "/workbench-cli");
  candidates.push_back(selfDir() + "/../cli/workbench-cli");
  std::vector<char*> args;
  std::string run = "run";
  args.push_back(nullptr);  // argv[0], set per candidate
  args.push_back(run.data());
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) != "--dark" && std::string(argv[i]) != "--light") args.push_back(argv[i]);
  args.push_back(nullptr);
  for (auto& c : candidates) {
    if (::access(c.c_str(), X_OK) != 0) continue;
    args[0] = c.data();
    ::execv(c.c_str(), args.data());
  }
  std::string name = "workbench-cli";
  args[0] = name.data();
  ::execvp(name.c_str(), args.data());
  std::fprintf(stderr, "workbench: workbench-cli not found (install it beside workbench or set WB_CLI)\n");
  return 1;
}

// SIGINT/SIGTERM quit through the event loop, so every run's process group is torn down.
int signalPipe[2] = {-1, -1};
void onSignal(int) {
  const char c = 1;
  [[maybe_unused]] auto n = ::write(signalPipe[1], &c, 1);
}

void installSignalHandlers(QApplication& app) {
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, signalPipe) != 0) return;
  auto* notifier = new QSocketNotifier(signalPipe[0], QSocketNotifier::Read, &app);
  QObject::connect(notifier, &QSocketNotifier::activated, &app, [] {
    char c;
    [[maybe_unused]] auto n = ::read(signalPipe[0], &c, 1);
    // No questions on a signal: leaving exec() destroys the window, whose run drivers kill
    // their process groups.
    QApplication::quit();
  });
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

// --size WxH: the window's size; false (said on stderr) when it is not one.
bool sizeWindow(QWidget& window, const QString& text) {
  if (text.isEmpty()) return true;
  const QStringList wh = text.split(QLatin1Char('x'));
  bool okW = false, okH = false;
  const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0, h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
  if (!okW || !okH || w < 320 || h < 240) {
    std::fprintf(stderr, "workbench: --size %s: give the width and height in pixels, e.g. --size 1280x800\n", qPrintable(text));
    return false;
  }
  window.resize(w, h);
  return true;
}

// --grab FILE: once the window has been shown and what it opened has been read (four seconds of
// its event loop: the machine's check done), save it as a PNG and quit (exit 1, said, when the file cannot be written).
void grabWhenSettled(QWidget& window, const QString& file) {
  QTimer::singleShot(4000, &window, [&window, file] {
    const bool saved = window.grab().save(file, "PNG");
    if (!saved) std::fprintf(stderr, "workbench: --grab %s: cannot write the file\n", qPrintable(file));
    QCoreApplication::exit(saved ? 0 : 1);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (!hasDisplay()) return runHeadless(argc, argv);

  QApplication::setApplicationName(QStringLiteral("speedup-workbench"));
  QApplication::setApplicationDisplayName(QStringLiteral("Speedup Workbench"));
  QApplication::setOrganizationName(QStringLiteral("speedup-workbench"));
  QApplication::setApplicationVersion(QStringLiteral(WB_VERSION));
  QApplication::setDesktopFileName(QStringLiteral(WB_APP_ID));
  QApplication app(argc, argv);
  QApplication::setWindowIcon(wb::ui::applicationIcon());

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Speedup Workbench: measure which training speedups pay off"));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption dark(QStringLiteral("dark"), QStringLiteral("Dark theme (Fusion)."));
  QCommandLineOption light(QStringLiteral("light"), QStringLiteral("Light theme (Fusion)."));
  QCommandLineOption root(QStringLiteral("runs-root"), QStringLiteral("Folder of run directories."), QStringLiteral("dir"));
  QCommandLineOption config(QStringLiteral("config"), QStringLiteral("Open this experiment JSON."), QStringLiteral("file"));
  QCommandLineOption fresh(QStringLiteral("fresh"), QStringLiteral("Start from the default experiment, ignoring the saved set-up."));
  QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Open the window at this size, e.g. 1280x800."), QStringLiteral("WxH"));
  QCommandLineOption grab(QStringLiteral("grab"),
                          QStringLiteral("Save the window as this PNG once what was opened has settled, then quit "
                                         "(the docs' screenshots)."),
                          QStringLiteral("file"));
  parser.addOptions({dark, light, root, config, fresh, size, grab});
  parser.addPositionalArgument(QStringLiteral("paths"), QStringLiteral("Run folders, dataset folders or experiment files to open."),
                               QStringLiteral("[paths...]"));
  parser.process(app);

  wb::ui::MainWindow::Options options;
  options.runsRoot = parser.value(root);
  wb::ui::MainWindow window(options);
  if (parser.isSet(fresh)) window.setup()->resetToDefaults();
  if (parser.isSet(dark)) window.setTheme(wb::ui::Theme::Dark);
  else if (parser.isSet(light)) window.setTheme(wb::ui::Theme::Light);
  else window.setTheme(window.theme());  // the one chosen last time (View → Theme)
  if (parser.isSet(config)) window.openPath(parser.value(config));
  for (const QString& p : parser.positionalArguments()) window.openPath(p);
  installSignalHandlers(app);
  if (!sizeWindow(window, parser.value(size))) return 2;
  window.show();
  if (parser.isSet(grab)) grabWhenSettled(window, parser.value(grab));
  return app.exec();
}
