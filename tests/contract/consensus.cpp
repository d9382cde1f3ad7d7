// The agreements every devmesh step rests on (runtime/impl/consensus.hpp), on a communicator of
// threads (no MPI): each rank is a thread, the control plane is shared memory, and a rank
// can vanish between two of a step's exchanges, as a rank that dies mid-step does.
//   - a rank whose own part failed keeps its error when gathering the others' errors then
//     times out (the time-out is said after it, never instead of it);
//   - agree_all's "as many checks on every rank" is checked: ranks that agree on different
//     numbers of outcomes (or one with a descriptor, one without) throw, on every rank,
//     instead of all-reducing vectors of different lengths;
//   - the failures agree_all reports, in its order (before, the descriptor, after);
//   - a call's description that differs (redistribute's agreement) is said as such, in full, and
//     the check mode names a rank whose call number on the dim differs.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <devmesh/runtime/impl/collective_check.hpp>
#include <devmesh/runtime/impl/consensus.hpp>

namespace dm = devmesh;
using namespace std::chrono_literals;

namespace {

/// What the ranks of a thread_comm share: each exchange (a round) collects every rank's bytes.
struct hub {
  explicit hub(int ranks) : n(ranks) {}
  const int n;
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::uint64_t, std::map<int, std::vector<char>>> rounds;  // round -> rank -> bytes
  int vanishing_rank = -1;                                           // makes no exchange past...
  std::uint64_t vanish_after = 0;                                    // ... this many
};

/// The rank that vanished (thrown out of its exchange; the others time out waiting for it).
struct vanished {};

/// A devmesh::communicator whose ranks are threads of this process (the control plane only:
/// what consensus.hpp uses). A rank whose all_reduce_max has fewer words than another's
/// reduces its own words only, as a backend that checks no count does.
class thread_comm {
 public:
  using native_type = int;
  struct options_type {};
  using stream_type = dm::no_stream;
  thread_comm(hub& h, int rank) : hub_(&h), rank_(rank) {}
  bool valid() const { return true; }
  int rank() const { return rank_; }
  int size() const { return hub_->n; }
  int native() const { return rank_; }
  thread_comm split(int, int, const options_type&) const { throw std::logic_error("thread_comm: no split"); }
  void all_gather_bytes(const void* in, void* out, std::size_t n, const dm::deadline& d) const {
    const auto all = exchange(in, n, d);
    for (std::size_t r = 0; r < all.size(); ++r)
      std::memcpy(static_cast<char*>(out) + r * n, all[r].data(), std::min(n, all[r].size()));
  }
  void all_reduce_max(std::uint64_t* words, std::size_t n, const dm::deadline& d) const {
    const auto all = exchange(words, n * sizeof(std::uint64_t), d);
    for (const auto& bytes : all)
      for (std::size_t i = 0; i < n && (i + 1) * sizeof(std::uint64_t) <= bytes.size(); ++i) {
        std::uint64_t w = 0;
        std::memcpy(&w, bytes.data() + i * sizeof(w), sizeof(w));
        words[i] = std::max(words[i], w);
      }
  }
  thread_comm duplicate(const dm::deadline&) const { return *this; }
  void abort() noexcept {}
  static const char* backend_name() { return "threads"; }
  static void group_start() {}
  static void group_end() {}
  // The collectives the concept requires: declared only (consensus uses the control plane).
  template <class T>
  static constexpr bool carries = dm::known_element<T>;
  void all_reduce(const void*, void*, std::size_t, dm::element_type, dm::op, stream_type) const;
  void reduce(const void*, void*, std::size_t, dm::element_type, dm::op, int, stream_type) const;
  void broadcast(void*, std::size_t, dm::element_type, int, stream_type) const;
  void all_gather(const void*, void*, std::size_t, dm::element_type, stream_type) const;
  void reduce_scatter(const void*, void*, std::size_t, dm::element_type, dm::op, stream_type) const;
  void all_to_all(const void*, void*, std::size_t, dm::element_type, stream_type) const;
  void barrier(stream_type) const;
  void sendrecv(const void*, std::size_t, int, void*, std::size_t, int, dm::element_type, stream_type) const;

 private:
  std::vector<std::vector<char>> exchange(const void* in, std::size_t n, const dm::deadline& d) const {
    std::unique_lock lock(hub_->mu);
    const std::uint64_t round = calls_++;
    if (rank_ == hub_->vanishing_rank && round >= hub_->vanish_after) throw vanished{};
    auto& slot = hub_->rounds[round];
    slot[rank_].assign(static_cast<const char*>(in), static_cast<const char*>(in) + n);
    hub_->cv.notify_all();
    if (!hub_->cv.wait_until(lock, d.at, [&] { return static_cast<int>(slot.size()) == hub_->n; }))
      throw dm::timeout_error("threads: rank " + std::to_string(rank_) + " waited for the others in exchange #" +
                              std::to_string(round + 1));
    std::vector<std::vector<char>> all;
    for (const auto& [r, bytes] : slot) all.push_back(bytes);
    return all;
  }
  hub* hub_;
  int rank_;
  mutable std::uint64_t calls_ = 0;
};
static_assert(dm::communicator<thread_comm>);

/// What each rank's call threw ("" if it returned), run on `n` ranks as threads.
std::vector<std::string> on_ranks(hub& h, const std::function<void(const thread_comm&)>& step) {
  std::vector<std::string> what(static_cast<std::size_t>(h.n));
  std::vector<std::thread> threads;
  for (int r = 0; r < h.n; ++r)
    threads.emplace_back([&, r] {
      try {
        step(thread_comm(h, r));
      } catch (const vanished&) {
        what[static_cast<std::size_t>(r)] = "(vanished)";
      } catch (const dm::timeout_error& e) {
        what[static_cast<std::size_t>(r)] = std::string("timeout_error: ") + e.what();
      } catch (const std::exception& e) {
        what[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return what;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
/// a, then b, in s.
bool in_order(const std::string& s, const std::string& a, const std::string& b) {
  const auto i = s.find(a);
  return i != std::string::npos && s.find(b, i + a.size()) != std::string::npos;
}

dm::deadline soon() { return dm::deadline::after(std::chrono::milliseconds(500)); }

}  // namespace

TEST_CASE("a rank's own error survives the time-out of gathering the others'") {
  // Both ranks fail their part; rank 1 then vanishes after the flags' all-reduce, so rank 0's
  // gathering of every rank's error times out. Rank 0 must still say why it failed.
  hub h(2);
  h.vanishing_rank = 1;
  h.vanish_after = 1;
  const auto what = on_ranks(h, [](const thread_comm& c) {
    dm::detail::agree(c, "injected: rank " + std::to_string(c.rank()) + "'s own error", "init", soon());
  });
  INFO(what[0]);
  CHECK(what[1] == "(vanished)");
  CHECK(contains(what[0], "timeout_error: "));  // still a time-out: the communicator is unusable
  CHECK(in_order(what[0], "injected: rank 0's own error", "timed out"));
  CHECK(contains(what[0], "init failed on this rank (0)"));
}

TEST_CASE("agree_all: a rank's own error survives the time-out of gathering the others'") {
  hub h(2);
  h.vanishing_rank = 1;
  h.vanish_after = 1;
  const auto what = on_ranks(h, [](const thread_comm& c) {
    const dm::detail::step_outcome before[] = {{"flatten: a check", "injected: rank " + std::to_string(c.rank())}};
    dm::detail::agree_all(c, "flatten", before, nullptr, {}, soon());
  });
  INFO(what[0]);
  CHECK(what[1] == "(vanished)");
  CHECK(in_order(what[0], "injected: rank 0", "timed out"));
}

TEST_CASE("a rank that did not fail, when gathering times out, says the step timed out") {
  hub h(2);
  h.vanishing_rank = 1;
  h.vanish_after = 1;
  const auto what = on_ranks(h, [](const thread_comm& c) {
    dm::detail::agree(c, c.rank() == 1 ? "injected: rank 1 fails" : "", "init", soon());
  });
  INFO(what[0]);
  CHECK(contains(what[0], "timeout_error: devmesh: init: timed out after 0.5 s waiting for the other ranks"));
}

TEST_CASE("agree_all: ranks with different numbers of outcomes throw, every one of them") {
  hub h(2);
  const auto what = on_ranks(h, [](const thread_comm& c) {
    const std::vector<dm::detail::step_outcome> before(c.rank() == 0 ? 1 : 2, dm::detail::step_outcome{"split", ""});
    dm::detail::agree_all(c, "split", before, nullptr, {}, soon());
  });
  for (const auto& w : what) {
    INFO(w);
    CHECK(contains(w, "devmesh: split: the ranks disagree on the checks this step agrees on"));
  }
  CHECK(contains(what[0], "this rank: 1 before the descriptor, none, 0 after"));
  CHECK(contains(what[1], "this rank: 2 before the descriptor, none, 0 after"));
}

TEST_CASE("agree_all: a descriptor on one rank and none on another throws on both") {
  hub h(2);
  const auto what = on_ranks(h, [](const thread_comm& c) {
    const dm::detail::step_outcome after[] = {{"init: a check", ""}};
    const auto mine = dm::detail::descriptor::of_text("the same text");
    dm::detail::agree_all(c, "init", {}, c.rank() == 0 ? &mine : nullptr, after, soon());
  });
  for (const auto& w : what) {
    INFO(w);
    CHECK(contains(w, "devmesh: init: the ranks disagree on the checks this step agrees on"));
  }
}

TEST_CASE("agree_all: the first failure in its order, on every rank") {
  const auto mine_of = [](int rank) { return dm::detail::descriptor::of_text(rank == 2 ? "odd" : "even"); };
  SUBCASE("a failure before the descriptor comes first") {
    hub h(3);
    const auto what = on_ranks(h, [&](const thread_comm& c) {
      const dm::detail::step_outcome before[] = {{"init: local", ""}, {"init: fits", c.rank() == 1 ? "too big" : ""}};
      const dm::detail::step_outcome after[] = {{"init: later", "later on every rank"}};
      const auto mine = mine_of(c.rank());
      dm::detail::agree_all(c, "init", before, &mine, after, soon());
    });
    for (const auto& w : what) {
      INFO(w);
      CHECK(contains(w, "devmesh: init: fits failed on rank 1 of 3; rank 1: too big"));
    }
  }
  SUBCASE("then the descriptors") {
    hub h(3);
    const auto what = on_ranks(h, [&](const thread_comm& c) {
      const dm::detail::step_outcome after[] = {{"init: later", "later on every rank"}};
      const auto mine = mine_of(c.rank());
      dm::detail::agree_all(c, "init", {}, &mine, after, soon());
    });
    for (const auto& w : what) {
      INFO(w);
      CHECK(contains(w, "devmesh: init: the ranks disagree on the device mesh: rank 2 has odd; ranks 0-1 have even"));
    }
  }
  SUBCASE("then after") {
    hub h(3);
    const auto what = on_ranks(h, [&](const thread_comm& c) {
      const dm::detail::step_outcome after[] = {{"init: a", ""}, {"init: b", c.rank() == 0 ? "" : "b failed"}};
      const auto mine = dm::detail::descriptor::of_text("alike");
      dm::detail::agree_all(c, "init", {}, &mine, after, soon());
    });
    for (const auto& w : what) {
      INFO(w);
      CHECK(contains(w, "devmesh: init: b failed on ranks 1-2 of 3; rank 1: b failed"));
    }
  }
  SUBCASE("and nothing when nothing failed") {
    hub h(3);
    const auto what = on_ranks(h, [&](const thread_comm& c) {
      const dm::detail::step_outcome before[] = {{"init: local", ""}};
      const auto mine = dm::detail::descriptor::of_text("alike");
      dm::detail::agree_all(c, "init", before, &mine, {}, soon());
    });
    CHECK(what == std::vector<std::string>(3));
  }
}

TEST_CASE("a call's description that differs: 'the ranks disagree on the call', the texts alone") {
  hub h(3);
  const auto what = on_ranks(h, [](const thread_comm& c) {
    auto mine = dm::detail::descriptor::of_text(c.rank() == 2 ? "call #4: odd" : "call #4: even");
    mine.subject = "the call";
    const dm::detail::step_outcome before[] = {{"devmesh: redistribute", ""}};
    dm::detail::agree_all(c, "devmesh: redistribute", before, &mine, {}, soon());
  });
  for (const auto& w : what) {
    INFO(w);
    CHECK(w == "devmesh: redistribute: the ranks disagree on the call: rank 2 has call #4: odd; ranks 0-1 have "
               "call #4: even.");
  }
}

TEST_CASE("the check mode names a rank whose call number on the dim differs (a call that threw on it alone)") {
  hub h(4);
  const auto what = on_ranks(h, [](const thread_comm& c) {
    const auto s = dm::detail::signature(dm::detail::call::all_reduce, dm::element_type_of<float>, 8, 8, 0, 1,
                                         c.rank() == 1 ? 6 : 5);
    dm::detail::check_call(c, s, "float", "dim 'dp'", soon());
  });
  for (const auto& w : what) {
    INFO(w);
    CHECK(w == "devmesh: all_reduce on dim 'dp': the ranks disagree on the call (DEVMESH_CHECK_COLLECTIVES): "
               "call number on the dim: ranks 0,2-3 have #5, rank 1 has #6");
  }
}
