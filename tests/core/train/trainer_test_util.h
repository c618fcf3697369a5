#pragma once
// Runs the trainer in this process on real Fashion-MNIST and keeps every event it wrote.
#include <QtTest/QtTest>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/proto/events.h"
#include "wb/train/trainer.h"

namespace {

using nlohmann::json;

struct Ran {
  wb::train::TrainOutcome outcome;
  std::vector<json> events;
  std::vector<json> of(const std::string& type) const {
    std::vector<json> out;
    for (const auto& e : events)
      if (e.value("type", "") == type) out.push_back(e);
    return out;
  }
};

// onEvent sees each event as it is written, inside the run (e.g. to damage a file it names).
inline Ran train(const wb::Config& c, const std::string& runDir = "",
                const std::function<void(const json&)>& onEvent = nullptr) {
  Ran r;
  wb::proto::EventSink sink;
  sink.setObserver([&](const json& e) {
    r.events.push_back(e);
    if (onEvent) onEvent(e);
  });
  wb::train::TrainerOptions o;
  o.config = c;
  o.run_dir = runDir;
  wb::train::Trainer t(o, sink);
  auto out = t.run();
  if (!out.ok()) {
    QTest::qFail(("trainer failed: " + out.error().message).c_str(), __FILE__, __LINE__);
    return r;
  }
  r.outcome = out.value();
  return r;
}

// lenet with Adam on 3,000 / 1,000 samples, one thread, a fixed seed.
inline wb::Config smallConfig() {
  wb::Config c;
  c.name = "trainer-test";
  c.seed = 7;
  c.model.name = "lenet";
  c.data.limit_train = 3000;
  c.data.limit_val = 1000;
  c.optim.name = "adam";
  c.optim.lr = 0.002;
  c.train.batch_size = 64;
  c.train.log_every = 10;
  c.train.threads = 1;
  return c;
}

}  // namespace
