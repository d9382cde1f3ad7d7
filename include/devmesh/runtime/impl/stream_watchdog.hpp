// devmesh/runtime/impl/stream_watchdog.hpp: the watchdog of a backend whose collectives run on
// streams (NCCL: runtime/backend.hpp's stream_watchable). A collective only enqueues work;
// whether it completes is seen later, from an event recorded on its stream after it. One
// thread per root mesh, started at the first watched call and joined when the root's state
// dies, polls the events of the calls in flight, oldest first up to the first still running
// (a stream's calls end in order; a call done behind one of another stream is seen later, and
// always before it could fire): a call done is `completed` in the flight record (its end: when
// the thread saw it, within its poll interval); a call past the bound (options.watchdog) fires:
// the ranks of its group hold a roll call over the host channel (who issued the call), every
// communicator of the root is aborted (ncclCommAbort ends the kernel: a thread waiting on
// the stream returns), the flight record is written (DEVMESH_FLIGHT_RECORD) and the reason
// is printed; from then on every devmesh call on the root throws comm_error with it.
#pragma once
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../../core/diagnostics.hpp"
#include "../backend.hpp"
#include "../comm_entry.hpp"
#include "consensus.hpp"
#include "../deadline.hpp"
#include "../flight_recorder.hpp"
#include "recorder.hpp"
#include "../text_ref.hpp"

namespace devmesh::detail {

template <communicator Comm>
struct mesh_state;

/// The watchdog of one root mesh over a stream backend (see the top of this file).
template <communicator Comm>
class stream_watchdog {
  using event = typename Comm::event_type;
  using entry = comm_entry<Comm>;

 public:
  using watch_type = typename Comm::watch_type;
  stream_watchdog() = default;
  stream_watchdog(const stream_watchdog&) = delete;
  stream_watchdog& operator=(const stream_watchdog&) = delete;
  ~stream_watchdog() {
    {
      std::lock_guard lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    release_all(call_state::enqueued);
    for (event e : free_) Comm::destroy_event(e);
  }

  /// Before a watched call: the issue lock (the watchdog aborts only between enqueues), the
  /// thread started; comm_error naming the call (`where()`) when the watchdog fired already.
  std::unique_lock<std::timed_mutex> enter(mesh_state<Comm>& st, std::string_view what, text_ref where) {
    std::unique_lock issue(issue_);
    if (fired_.load(std::memory_order_acquire)) [[unlikely]]
      throw comm_error("devmesh: " + std::string(what) + " on " + where() + ": " + failure_);
    std::lock_guard lk(m_);
    if (!thread_.joinable()) thread_ = std::thread([this, &st] { run(st); });
    return issue;
  }
  /// A free event for the next call (null: the backend makes one).
  event take_event() {
    std::lock_guard lk(m_);
    if (free_.empty()) return event{};
    const event e = free_.back();
    free_.pop_back();
    return e;
  }
  /// After the call was enqueued (`w` as the backend left it): watched until its event
  /// completes, or past `bound`. Returns its id (0: not watched, recorded as `enqueued`).
  std::uint64_t add(const entry& e, std::string_view what, const flight_recorder::token& rec, watch_type& w,
                    std::chrono::milliseconds bound, text_ref where) {
    std::unique_lock lk(m_);
    if (w.unwatched || !w.event) {
      if (w.event) free_.push_back(w.event);
      rec.finish(call_state::enqueued);
      return 0;
    }
    rec.finish(call_state::enqueued);  // until the thread sees its event: completed, or timed_out
    chan& c = channel_of(e, where);
    c.issued = std::max(c.issued, e.calls);
    calls_.push_back({++ids_, rec, w.event, std::move(w.keep), deadline::after(bound), &e, e.calls, what, &c.where,
                      std::chrono::steady_clock::now()});
    w.event = event{};
    return ids_;  // no wake-up: the thread looks every 10 ms when idle (a futex wake per call costs more)
  }
  /// Waits, watched, for call `id` (a barrier): returns once it is done; comm_error naming the
  /// call when the watchdog fires meanwhile (its abort ends the wait).
  void wait(std::uint64_t id, std::string_view what, text_ref where) {
    auto nap = std::chrono::microseconds(20);
    for (;;) {
      {
        std::lock_guard lk(m_);
        const auto it = std::find_if(calls_.begin(), calls_.end(), [id](const call& c) { return c.id == id; });
        if (it == calls_.end() && !firing_.load()) break;
        if (it == calls_.end() && fired_.load()) break;  // the watchdog ended it: below
        if (it != calls_.end() && Comm::query_event(it->ev) != 0) {  // done (or failed: reported as the thread would)
          complete(it);
          break;
        }
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
    if (fired_.load(std::memory_order_acquire))
      throw comm_error("devmesh: " + std::string(what) + " on " + where() + ": " + failure_);
  }
  /// The mesh is being aborted (abort(), or the watchdog itself): the calls in flight are no
  /// longer watched; their entries say `failed`.
  void stop_watching() noexcept { release_all(call_state::failed); }
  /// True once the watchdog fired; failure(): why (every later call's message).
  bool fired() const noexcept { return fired_.load(std::memory_order_acquire); }

 private:
  struct chan {
    const entry* e;
    std::string where;
    std::uint64_t issued = 0;  // the highest call number issued here on it (the roll call's answer)
  };
  struct call {
    std::uint64_t id;
    flight_recorder::token rec;
    event ev;
    std::shared_ptr<void> keep;
    deadline until;
    const entry* on;
    std::uint64_t seq;
    std::string_view what;
    const std::string* where;
    std::chrono::steady_clock::time_point issued;
  };

  chan& channel_of(const entry& e, text_ref where) {
    for (chan& c : chans_)
      if (c.e == &e) return c;
    chans_.push_back({&e, where(), 0});  // a deque: the others stay where they are
    return chans_.back();
  }
  typename std::deque<call>::iterator complete(typename std::deque<call>::iterator it) {
    it->rec.finish(Comm::query_event(it->ev) > 0 ? call_state::completed : call_state::failed);
    free_.push_back(it->ev);
    return calls_.erase(it);
  }
  void release_all(call_state s) noexcept {
    std::lock_guard lk(m_);
    for (call& c : calls_) {
      c.rec.finish(s);
      free_.push_back(c.ev);
    }
    calls_.clear();
  }

  /// The thread: polls the calls in flight (naps of 50 us growing to 2 ms; 10 ms when none,
  /// answering roll calls meanwhile) until the state dies.
  void run(mesh_state<Comm>& st) {
    std::unique_lock lk(m_);
    auto nap = std::chrono::microseconds(50);
    while (!stop_) {
      if (calls_.empty()) {
        cv_.wait_for(lk, std::chrono::milliseconds(10));
        nap = std::chrono::microseconds(50);
      } else {
        lk.unlock();
        std::this_thread::sleep_for(nap);
        nap = std::min(nap * 2, std::chrono::microseconds(2000));
        lk.lock();
      }
      if (stop_) break;
      // Oldest first, up to the first still running: a stream's calls end in order, so one
      // query per poll in the steady state (the mutex held briefly: calls enqueue meanwhile).
      while (!calls_.empty() && Comm::query_event(calls_.front().ev) != 0) complete(calls_.begin());
      answer_notes();
      const auto late = std::find_if(calls_.begin(), calls_.end(), [](const call& c) { return c.until.passed(); });
      if (late == calls_.end() || fired_.load()) continue;
      if (Comm::query_event(late->ev) != 0) {  // done behind a call of another stream: not late
        complete(late);
        continue;
      }
      firing_.store(true);
      call c = std::move(*late);
      calls_.erase(late);
      lk.unlock();
      fire(st, std::move(c));
      lk.lock();
    }
  }

  /// Answers every roll-call note that has arrived (the mutex held): kind 1, "I wait in call
  /// #n", is answered with kind 2, "I issued calls up to #n" on that channel.
  void answer_notes(std::vector<std::uint64_t>* heard = nullptr, const chan* on = nullptr) {
    for (const chan& c : chans_) {
      int from = -1;
      std::uint64_t note[2] = {0, 0};
      while (c.e->comm->take_note(from, note)) {
        if (note[0] == 1) {
          const std::uint64_t answer[2] = {2, c.issued};
          c.e->comm->post_note(from, answer);
        }
        if (heard && &c == on && from >= 0 && static_cast<std::size_t>(from) < heard->size())
          (*heard)[static_cast<std::size_t>(from)] = std::max((*heard)[static_cast<std::size_t>(from)], note[1]);
      }
    }
  }

  /// The roll call for c: asks every rank of its group which call it issued, listens for a
  /// grace of a tenth of the bound (at most 1 s); the ranks that did not issue call #seq.
  std::vector<int> roll_call(const call& c) {
    const Comm& comm = *c.on->comm;
    const int n = comm.size(), me = comm.rank();
    std::vector<std::uint64_t> heard(static_cast<std::size_t>(std::max(n, 0)), 0);
    const std::uint64_t ask[2] = {1, c.seq};
    for (int r = 0; r < n; ++r)
      if (r != me) comm.post_note(r, ask);
    const chan* on = nullptr;
    for (const chan& ch : chans_)
      if (ch.e == c.on) on = &ch;
    const auto grace = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(1000), c.until.bound / 10);
    poll_until(deadline::after(grace), [&] {
      std::lock_guard lk(m_);
      answer_notes(&heard, on);
      return false;
    });
    std::vector<int> absent;
    for (int r = 0; r < n; ++r)
      if (r != me && heard[static_cast<std::size_t>(r)] < c.seq) absent.push_back(r);
    return absent;
  }

  /// c is past its bound: the roll call, the message, the abort, the dump (the thread's; the
  /// issue lock held, waited for at most a grace of 1 s: an enqueue stuck in NCCL is aborted
  /// under it, as NCCL allows from another thread).
  void fire(mesh_state<Comm>& st, call c) {
    const bool locked = issue_.try_lock_for(std::chrono::seconds(1));
    const std::string unknown = c.on->comm->roll_call_unavailable();
    const std::vector<int> absent = unknown.empty() ? roll_call(c) : std::vector<int>{};
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - c.issued).count();
    std::string why = std::string(c.what) + " on " + *c.where + ", call #" + std::to_string(c.seq) +
                      " on this dim, did not complete within " + c.until.describe() +
                      " (the watchdog: options.watchdog, DEVMESH_WATCHDOG; it waited " + seconds_text(waited) + ")";
    c.rec.finish(call_state::timed_out);
    Comm::destroy_event(c.ev);
    failure_ = "this mesh was aborted by its watchdog: " + why + "; " + absent_phrase(*c.on, absent, unknown) +
               "; this mesh's communicators are aborted (every later call throws)";
    st.abort("the watchdog aborted the mesh: " + why);
    failure_ += st.dump_record();
    fired_.store(true, std::memory_order_release);  // failure_ is final: the calls may read it
    std::fprintf(stderr, "devmesh: watchdog, world rank %d: %s\n", st.world_rank, failure_.c_str());
    std::fflush(stderr);
    if (locked) issue_.unlock();
  }
  static std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
  }

  std::timed_mutex issue_;  // held by a thread enqueueing a watched call
  std::mutex m_;            // the lists below
  std::condition_variable cv_;
  std::deque<call> calls_;  // in flight, oldest first (completed from the front: a deque)
  std::deque<chan> chans_;  // one per channel watched calls were made on
  std::vector<event> free_;  // recycled events
  std::uint64_t ids_ = 0;
  bool stop_ = false;
  std::atomic<bool> fired_{false}, firing_{false};
  std::string failure_;  // written once, before fired_
  std::thread thread_;
};

}  // namespace devmesh::detail
