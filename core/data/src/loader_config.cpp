#include "wb/data/loader_config.h"

namespace wb::data {

LoaderOptions trainLoaderOptions(const Config& c, bool pin_memory, int workers, int rank, int world_size) {
  LoaderOptions lo;
  lo.batch_size = c.train.batch_size;
  lo.workers = workers;
  lo.shuffle = true;
  lo.seed = c.seed;
  lo.rank = rank;
  lo.world_size = world_size;
  lo.pin_memory = pin_memory;
  lo.max_bad_fraction = c.data.max_bad_fraction;
  lo.transform.augment = true;
  lo.transform.crop_padding = c.data.augment.crop_padding;
  lo.transform.hflip = c.data.augment.hflip;
  lo.transform.image_size = c.data.image_size;
  lo.transform.random_resized_crop = c.data.dataset.rfind("folder:", 0) == 0 && c.data.image_size > 0;
  lo.transform.normalize = c.data.augment.normalize;
  return lo;
}

LoaderOptions evalLoaderOptions(const Config& c, const LoaderOptions& train) {
  LoaderOptions vo = train;
  vo.shuffle = false;
  vo.transform.augment = false;
  vo.transform.random_resized_crop = false;
  vo.batch_size = c.speedups.inference_eval ? c.train.eval_batch_size : c.train.batch_size;
  return vo;
}

}  // namespace wb::data
