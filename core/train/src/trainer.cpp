#include "wb/train/trainer.h"

#include "training_run.h"

namespace wb::train {

// The steps of one run live in detail::TrainingRun (training_run.h); the Trainer is its face.
struct Trainer::Impl {
  TrainerOptions options;
  proto::EventSink& sink;
};

Trainer::Trainer(TrainerOptions options, proto::EventSink& sink)
    : impl_(std::make_unique<Impl>(Impl{std::move(options), sink})) {}
Trainer::~Trainer() = default;

Result<TrainOutcome> Trainer::run() { return detail::TrainingRun(impl_->options, impl_->sink).run(); }

}  // namespace wb::train
