// See fuse.h.
#include "model/fuse.h"

#include <torch/torch.h>

#include "model/conv.h"

namespace trainer::model {

void fuse_batchnorms(torch::nn::Module& model) {
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (auto conv = std::dynamic_pointer_cast<ConvImpl>(m)) conv->fuse_batchnorm();
  }
}

void keep_decoded_branch(YoloModelImpl& model, bool use_one2many) {
  const bool one2one = model.end2end() && !use_one2many;
  model.head()->set_branches(one2one ? DetectImpl::Branches::kOne2One
                                     : DetectImpl::Branches::kOne2Many);
}

YoloModel fused_copy(const YoloModelImpl& source) {
  YoloModel copy(source.name(), source.spec());
  const auto params = source.named_parameters(/*recurse=*/true);
  const auto buffers = source.named_buffers(/*recurse=*/true);
  copy->to(params[size_t{0}].value().device());  // float32 like every model we build
  {
    torch::NoGradGuard no_grad;
    for (auto& p : copy->named_parameters(/*recurse=*/true)) p.value().copy_(params[p.key()]);
    for (auto& b : copy->named_buffers(/*recurse=*/true)) b.value().copy_(buffers[b.key()]);
  }
  copy->eval();
  fuse_batchnorms(*copy);
  return copy;
}

}  // namespace trainer::model
