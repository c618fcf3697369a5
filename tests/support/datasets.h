#pragma once
// The datasets a test may find installed on this machine (packaging/setup.sh installs them).
#include <QFile>
#include <QString>

namespace wb::test {

// Debian's dataset-fashion-mnist (the default experiment's data).
inline bool haveFashionMnist() {
  return QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"));
}

}  // namespace wb::test
