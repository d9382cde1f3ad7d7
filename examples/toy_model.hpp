// examples/toy_model.hpp: the tutorials' ToyModel (Linear 10->10, ReLU, Linear 10->5) with
// an MSE loss, forward and backward written once as DEVMESH_HOST_DEVICE functors: a host
// loop runs them on the MPI path, a CUDA kernel on the NCCL path (examples::for_each).
//
// Parameters are one flat float array, as FSDP's flat parameter:
//   [ W1 (10x10, row-major out x in) | b1 (10) | W2 (5x10) | b2 (5) ]  = 165 floats.
// Stage 0 of the pipeline example owns [0, w2) (net1), stage 1 owns [w2, n_params) (net2).
#pragma once
#include <devmesh/core/config.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace toy {

inline constexpr int in = 10, hidden = 10, out = 5;
inline constexpr int w1 = 0, b1 = w1 + hidden * in, w2 = b1 + hidden, b2 = w2 + out * hidden;
inline constexpr int n_params = b2 + out;  // 165

// ---- per-sample math: loss = scale * sum_j (yhat_j - y_j)^2 ------------------------------
// (scale = 1 / (batch * out) makes the batch's loss PyTorch's MSELoss, mean reduction.)

/// net1 and ReLU: pre = W1 x + b1, h = relu(pre).
DEVMESH_HOST_DEVICE inline void net1_forward(const float* p, const float* x, float* pre, float* h) {
  for (int j = 0; j < hidden; ++j) {
    float s = p[b1 + j];
    for (int k = 0; k < in; ++k) s += p[w1 + j * in + k] * x[k];
    pre[j] = s;
    h[j] = s > 0.f ? s : 0.f;
  }
}

/// net2, the loss, and its backward: adds dL/dW2, dL/db2 into g, writes dL/dh; returns the loss.
DEVMESH_HOST_DEVICE inline float net2_forward_backward(const float* p, const float* h, const float* y, float scale,
                                                       float* g, float* dh) {
  float loss = 0.f;
  for (int k = 0; k < hidden; ++k) dh[k] = 0.f;
  for (int j = 0; j < out; ++j) {
    float yhat = p[b2 + j];
    for (int k = 0; k < hidden; ++k) yhat += p[w2 + j * hidden + k] * h[k];
    const float diff = yhat - y[j];
    loss += scale * diff * diff;
    const float dy = 2.f * scale * diff;
    g[b2 + j] += dy;
    for (int k = 0; k < hidden; ++k) {
      g[w2 + j * hidden + k] += dy * h[k];
      dh[k] += dy * p[w2 + j * hidden + k];
    }
  }
  return loss;
}

/// Backward through ReLU and net1: adds dL/dW1, dL/db1 into g.
DEVMESH_HOST_DEVICE inline void net1_backward(const float* x, const float* pre, const float* dh, float* g) {
  for (int j = 0; j < hidden; ++j) {
    const float d = pre[j] > 0.f ? dh[j] : 0.f;
    g[b1 + j] += d;
    for (int k = 0; k < in; ++k) g[w1 + j * in + k] += d * x[k];
  }
}

// ---- functors for examples::for_each (one index = one sample or one element) -------------

/// Sample i's forward and backward through the whole model: its gradient into row i of
/// `rows` (width `stride` >= n_params, the rest zero) and its loss into loss[i].
struct sample_grads {
  const float* p;
  const float* x;  // batch x in
  const float* y;  // batch x out
  float* rows;
  float* loss;
  int stride;
  float scale;
  DEVMESH_HOST_DEVICE void operator()(int i) const {
    float* g = rows + static_cast<long>(i) * stride;
    for (int k = 0; k < stride; ++k) g[k] = 0.f;
    float pre[hidden], h[hidden], dh[hidden];
    net1_forward(p, x + i * in, pre, h);
    loss[i] = net2_forward_backward(p, h, y + i * out, scale, g, dh);
    net1_backward(x + i * in, pre, dh, g);
  }
};

/// Pipeline stage 0, forward: sample i's pre-activation and activation (batch x hidden).
struct stage0_forward {
  const float* p;
  const float* x;
  float* pre;
  float* h;
  DEVMESH_HOST_DEVICE void operator()(int i) const { net1_forward(p, x + i * in, pre + i * hidden, h + i * hidden); }
};

/// Pipeline stage 1, forward and backward: gradient row i (width n_params), loss[i], dh.
struct stage1_forward_backward {
  const float* p;
  const float* h;
  const float* y;
  float* rows;
  float* loss;
  float* dh;
  float scale;
  DEVMESH_HOST_DEVICE void operator()(int i) const {
    float* g = rows + static_cast<long>(i) * n_params;
    for (int k = 0; k < n_params; ++k) g[k] = 0.f;
    loss[i] = net2_forward_backward(p, h + i * hidden, y + i * out, scale, g, dh + i * hidden);
  }
};

/// Pipeline stage 0, backward: gradient row i from the dh that stage 1 sent back.
struct stage0_backward {
  const float* x;
  const float* pre;
  const float* dh;
  float* rows;
  DEVMESH_HOST_DEVICE void operator()(int i) const {
    float* g = rows + static_cast<long>(i) * n_params;
    for (int k = 0; k < n_params; ++k) g[k] = 0.f;
    net1_backward(x + i * in, pre + i * hidden, dh + i * hidden, g);
  }
};

/// out[j] = sum over rows r of rows[r][j], in row order (a deterministic reduction).
struct sum_rows {
  const float* rows;
  int n_rows;
  int width;
  float* out;
  DEVMESH_HOST_DEVICE void operator()(int j) const {
    float s = 0.f;
    for (int r = 0; r < n_rows; ++r) s += rows[static_cast<long>(r) * width + j];
    out[j] = s;
  }
};

/// Plain SGD: p[i] -= lr * g[i].
struct sgd {
  float* p;
  const float* g;
  float lr;
  DEVMESH_HOST_DEVICE void operator()(int i) const { p[i] -= lr * g[i]; }
};

// ---- deterministic parameters and data ---------------------------------------------------

/// A reproducible uniform value in [-1, 1) from an integer (splitmix64).
inline float uniform(std::uint64_t n) {
  n += 0x9e3779b97f4a7c15ull;
  n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ull;
  n = (n ^ (n >> 27)) * 0x94d049bb133111ebull;
  n ^= n >> 31;
  return static_cast<float>(static_cast<double>(n >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

/// PyTorch's nn.Linear default init range: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), same on every rank.
inline std::vector<float> initial_params() {
  std::vector<float> p(n_params);
  const float bound = 1.f / std::sqrt(static_cast<float>(in));  // fan_in is 10 for both layers
  for (int i = 0; i < n_params; ++i) p[static_cast<std::size_t>(i)] = bound * uniform(1000 + static_cast<std::uint64_t>(i));
  return p;
}

/// Samples [first, first + count): inputs x (count x in) and targets y (count x out) from a
/// fixed "teacher" function, so the model has something to learn.
inline void make_batch(int first, int count, std::vector<float>& x, std::vector<float>& y) {
  x.assign(static_cast<std::size_t>(count * in), 0.f);
  y.assign(static_cast<std::size_t>(count * out), 0.f);
  for (int s = 0; s < count; ++s) {
    float* xs = &x[static_cast<std::size_t>(s * in)];
    for (int k = 0; k < in; ++k) xs[k] = uniform(static_cast<std::uint64_t>((first + s) * in + k));
    for (int j = 0; j < out; ++j) {
      float t = 0.f;
      for (int k = 0; k < in; ++k) t += std::sin(static_cast<float>(j + 1) * static_cast<float>(k + 1)) * xs[k];
      y[static_cast<std::size_t>(s * out + j)] = std::tanh(t);
    }
  }
}

/// The single-process reference: `steps` SGD steps on samples [0, batch), full-batch MSE.
/// Returns the loss before each step; p is updated in place.
inline std::vector<float> train_reference(std::vector<float>& p, int batch, int steps, float lr) {
  std::vector<float> x, y;
  make_batch(0, batch, x, y);
  std::vector<float> rows(static_cast<std::size_t>(batch * n_params)), loss(static_cast<std::size_t>(batch)),
      g(n_params), losses;
  const float scale = 1.f / static_cast<float>(batch * out);
  for (int step = 0; step < steps; ++step) {
    const sample_grads f{p.data(), x.data(), y.data(), rows.data(), loss.data(), n_params, scale};
    for (int i = 0; i < batch; ++i) f(i);
    const sum_rows sum{rows.data(), batch, n_params, g.data()};
    for (int j = 0; j < n_params; ++j) sum(j);
    float l = 0.f;
    for (float v : loss) l += v;
    losses.push_back(l);
    const sgd update{p.data(), g.data(), lr};
    for (int i = 0; i < n_params; ++i) update(i);
  }
  return losses;
}

/// Largest |a[i] - b[i]| over the first n elements.
inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, std::size_t n) {
  float m = 0.f;
  for (std::size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace toy
