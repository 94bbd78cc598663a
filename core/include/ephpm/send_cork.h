// Holding a thread's outgoing cluster frames until it has made a burst of
// them.
//
// A cluster transport writes a request made by a thread that is not one of
// its I/O threads at once, on that thread (a PHP worker's decision then
// costs no wake-up of an I/O thread).  A RESP connection that pipelines
// routed commands makes many such requests in a row, to a few owners, and
// each went out in its own system call and woke its owner once: 1.5 sends
// a routed INCR at `-P 16` (docs/BENCHMARKS.md).  While a SendCork is open
// on a thread, the transport queues that thread's frames instead, and
// notes each connection it queued on (Hold); when the outermost cork
// closes, or whenever the thread is about to wait (Release: for an answer,
// a confirmation, the log), every noted connection writes what it queued,
// one gathered write each.  A frame never leaves later than that, and its
// order on its connection is the order it was queued in.
//
// Per thread; corks nest (only the outermost releases at its end).  Not
// copyable.

#ifndef EPHPM_SEND_CORK_H_
#define EPHPM_SEND_CORK_H_

#include <memory>
#include <vector>

namespace ephpm {

// What holds frames for a cork: a transport connection, or a member's batch
// of decisions (which its Uncork sends as one frame).
class CorkedLink {
 public:
  // Writes what is queued (on the calling thread when it can, else by
  // handing it to the link's I/O thread).  Must not throw.  May note links
  // again (Hold): Release goes on until none is left.
  virtual void Uncork() noexcept = 0;

 protected:
  ~CorkedLink() = default;
};

class SendCork {
 public:
  SendCork();
  ~SendCork();
  SendCork(const SendCork&) = delete;
  SendCork& operator=(const SendCork&) = delete;

  // Whether a cork is open on this thread.
  static bool Open();
  // Notes `link` (once per release) to be uncorked when the cork releases.
  // REQUIRES: Open().  May throw bad_alloc (the caller then writes its frame
  // itself).
  static void Hold(std::shared_ptr<CorkedLink> link);
  // Uncorks every link noted so far on this thread (the cork stays open).
  // Called before the thread waits for anything a queued frame may bring.
  static void Release() noexcept;
};

}  // namespace ephpm

#endif  // EPHPM_SEND_CORK_H_
