#pragma once
// The top-level keys of `workbench-cli capabilities --json`, for the typed record
// (wb/proto/capabilities_record.h, which its writer and its readers use) and the CLI's version, OpenCV
// and peak additions, so the two sides cannot drift apart.
namespace wb::proto::caps {

inline constexpr const char* kVersion = "version";           // workbench-cli's
inline constexpr const char* kLibtorch = "libtorch";         // LibTorch version
inline constexpr const char* kOpencv = "opencv";             // OpenCV version
inline constexpr const char* kCuda = "cuda";                 // bool: a CUDA device is usable
inline constexpr const char* kCudaVersion = "cuda_version";  // CUDA toolkit of this build ("" without)
inline constexpr const char* kCudnn = "cudnn";               // cuDNN version ("" without)
inline constexpr const char* kGpus = "gpus";                 // number of CUDA devices
inline constexpr const char* kGpuNames = "gpu_names";        // their names, one per device
inline constexpr const char* kCores = "cores";               // logical cores
inline constexpr const char* kNccl = "nccl";                 // bool
inline constexpr const char* kGloo = "gloo";                 // bool
inline constexpr const char* kModels = "models";             // the built-in model names
inline constexpr const char* kSpeedups = "speedups";
inline constexpr const char* kPeak = "peak";                 // the stored peak calibration (wb/records/peak_store.h's
                                                             // peakJson + measured, date), or {measured: false}         // {<speedup>: {available, note, ...}}

}  // namespace wb::proto::caps
