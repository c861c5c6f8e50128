//! Runs the host's calls on the JavaScript thread's event loop, the way JavaScript runs an
//! `async` function (and Deno its ops): polled on that thread, each poll short, waits settled
//! through the event loop.
//!
//! A poll is short because the host never holds a thread while it waits: the database and
//! files wait on tokio's blocking pool, sockets on its reactor, and a plugin's code yields at
//! every epoch tick (`scratchpad_host`'s deadline check, every millisecond). So a call that does
//! not wait (a `beforeQuery` that reads the session's head) finishes in the method itself, and
//! one that waits makes the thread hand-offs of its waits and no more — those it makes in
//! Rust. A promise whose whole work runs on another thread makes two more (to the runtime, and
//! back through a thread-safe function): 25–45 µs on this project's VM, more than a
//! `beforeQuery`'s own work.
//!
//! A call that yields because its plugin's code ran until an epoch tick (it wakes itself while
//! polled here) moves to napi's tokio runtime for the rest: a plugin that computes holds the
//! event loop for one tick at most, never for its deadline.
//!
//! Every Node-API call here is made on the JavaScript thread, with that thread's `napi_env`:
//! the method's own, or the one its thread-safe function's callback is given. That is what the
//! `unsafe` blocks rely on.

use std::cell::{Cell, RefCell};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, ThreadId};

use futures::FutureExt;
use napi::bindgen_prelude::{ToNapiValue, Unknown, spawn, within_runtime_if_available};
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, JsError, Result, Status, sys};

/// Runs `work` and answers with its value when it finished without waiting, else with a
/// promise of it, settled on this thread's event loop. `env` is the calling method's.
pub(crate) fn run<'env, T: ToNapiValue + Send + 'static>(
    env: &'env Env,
    work: impl Future<Output = Result<T>> + Send + 'static,
) -> Result<Unknown<'env>> {
    let work: Work =
        Box::pin(work.map(|done| -> Settle {
            Box::new(move |env| done.and_then(|value| unsafe { T::to_napi_value(env, value) }))
        }));
    let event_loop = event_loop(env)?;
    let call = Arc::new(Call {
        js_thread: thread::current().id(),
        queue: event_loop.queue.clone(),
        state: Mutex::new(State::Polling { yielded: false, woken: false }),
        deferred: Mutex::new(None),
    });
    let value = match call.poll_here(work) {
        Some(settle) => settle(env.raw())?,
        None => {
            let (mut deferred, mut promise) = (std::ptr::null_mut(), std::ptr::null_mut());
            check(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
            *call.deferred.lock().unwrap_or_else(|p| p.into_inner()) = Some(Deferred(deferred));
            event_loop.started(env);
            promise
        }
    };
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

/// What settles a call's promise, run on the JavaScript thread: its value, or its error.
type Settle = Box<dyn FnOnce(sys::napi_env) -> Result<sys::napi_value> + Send>;

/// A call's work, its output type erased.
type Work = Pin<Box<dyn Future<Output = Settle> + Send>>;

/// What the event loop's thread-safe function carries to the JavaScript thread.
enum Message {
    /// Poll the call again: something it waited for is ready.
    Poll(Arc<Call>),
    /// Settle the call's promise: it finished on the runtime.
    Settle(Arc<Call>, Settle),
}

/// The JavaScript thread's queue of [`Message`]s: a thread-safe function that does not keep
/// the process alive by itself (`Weak`); [`EventLoop`] refers it while calls are pending.
type Queue = ThreadsafeFunction<Message, (), (), Status, false, true>;

/// A call in flight, and its waker.
struct Call {
    js_thread: ThreadId,
    queue: Arc<Queue>,
    state: Mutex<State>,
    /// The promise to settle, once the call has one (only touched on the JavaScript thread).
    deferred: Mutex<Option<Deferred>>,
}

enum State {
    /// Being polled on the JavaScript thread; `yielded` if it woke itself there (its plugin's
    /// code reached an epoch tick), `woken` if another thread woke it meanwhile.
    Polling { yielded: bool, woken: bool },
    /// Waiting for a wake, then to be polled on the JavaScript thread.
    Waiting(Work),
    /// A poll is queued on the JavaScript thread.
    Queued(Work),
    /// On the tokio runtime until it finishes.
    Moved,
    /// Finished.
    Done,
}

/// A promise's resolver (`napi_deferred`), moved between threads but used on its own only.
struct Deferred(sys::napi_deferred);

// SAFETY: a `napi_deferred` is only an opaque handle; this crate resolves it on the JavaScript
// thread that made it (`settle`, called from that thread's event loop).
unsafe impl Send for Deferred {}

impl Call {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Polls `work` once on this (the JavaScript) thread, the call's state being `Polling`:
    /// what settles the call when it finished, else `None` (waiting, queued or moved).
    fn poll_here(self: &Arc<Self>, mut work: Work) -> Option<Settle> {
        let waker = Waker::from(self.clone());
        // Inside the runtime's context, so what the work starts (a blocking task, a timer, a
        // socket) belongs to the runtime that wakes it. A panic is the call's error.
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
            within_runtime_if_available(|| work.as_mut().poll(&mut Context::from_waker(&waker)))
        }));
        let mut state = self.state();
        match polled {
            Ok(Poll::Ready(settle)) => {
                *state = State::Done;
                Some(settle)
            }
            Err(_) => {
                *state = State::Done;
                Some(panicked())
            }
            Ok(Poll::Pending) => {
                let State::Polling { yielded, woken } = *state else { unreachable!("polled twice at once") };
                if yielded {
                    *state = State::Moved;
                    drop(state);
                    let call = self.clone();
                    spawn(async move {
                        let settle = AssertUnwindSafe(work).catch_unwind().await.unwrap_or_else(|_| panicked());
                        call.send(Message::Settle(call.clone(), settle));
                    });
                } else if woken {
                    *state = State::Queued(work);
                    drop(state);
                    self.send(Message::Poll(self.clone()));
                } else {
                    *state = State::Waiting(work);
                }
                None
            }
        }
    }

    /// Queues `message` on the JavaScript thread. When that thread's environment is gone
    /// (a worker that ended) the message is dropped, and the call with it.
    fn send(&self, message: Message) {
        let _ = self.queue.call(message, ThreadsafeFunctionCallMode::NonBlocking);
    }

    /// On the JavaScript thread: settles the call's promise with `settle`.
    fn settle(&self, env: sys::napi_env, settle: Settle) {
        let Some(Deferred(deferred)) = self.deferred.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        let _ = match settle(env) {
            Ok(value) => check(unsafe { sys::napi_resolve_deferred(env, deferred, value) }),
            Err(error) => {
                check(unsafe { sys::napi_reject_deferred(env, deferred, JsError::from(error).into_value(env)) })
            }
        };
    }
}

impl Wake for Call {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state();
        match &mut *state {
            State::Waiting(_) => {
                let State::Waiting(work) = std::mem::replace(&mut *state, State::Done) else { unreachable!() };
                *state = State::Queued(work);
                drop(state);
                self.send(Message::Poll(self.clone()));
            }
            State::Polling { yielded, woken } => {
                if thread::current().id() == self.js_thread {
                    *yielded = true;
                } else {
                    *woken = true;
                }
            }
            State::Queued(_) | State::Moved | State::Done => {}
        }
    }
}

/// A panic in a call, as its error.
fn panicked() -> Settle {
    Box::new(|_| Err(Error::new(Status::GenericFailure, "the scratchpad host panicked in this call")))
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok { Ok(()) } else { Err(Error::new(Status::from(status), "Node-API call failed")) }
}

/// One JavaScript thread's queue, and how many of its calls are pending.
struct EventLoop {
    queue: Arc<Queue>,
    pending: Cell<usize>,
}

thread_local! {
    static EVENT_LOOP: RefCell<Option<Rc<EventLoop>>> = const { RefCell::new(None) };
}

/// This JavaScript thread's event loop, its queue made on first use.
fn event_loop(env: &Env) -> Result<Rc<EventLoop>> {
    EVENT_LOOP.with(|slot| {
        let mut slot = slot.borrow_mut();
        if let Some(event_loop) = slot.as_ref().filter(|e| !e.queue.aborted()) {
            return Ok(event_loop.clone());
        }
        let function = env.create_function_from_closure::<(), (), _>("scratchpad", |_| Ok(()))?;
        let queue =
            function.build_threadsafe_function::<Message>().weak::<true>().callee_handled::<false>().build_callback(
                |context: ThreadsafeCallContext<Message>| {
                    receive(context.env, context.value);
                    Ok(())
                },
            )?;
        let event_loop = Rc::new(EventLoop { queue: Arc::new(queue), pending: Cell::new(0) });
        *slot = Some(event_loop.clone());
        Ok(event_loop)
    })
}

impl EventLoop {
    /// A call became pending: the process stays alive until it settles.
    fn started(&self, env: &Env) {
        if self.pending.replace(self.pending.get() + 1) == 0 {
            let _ = check(unsafe { sys::napi_ref_threadsafe_function(env.raw(), self.queue.raw()) });
        }
    }

    /// A pending call settled.
    fn ended(&self, env: &Env) {
        if self.pending.replace(self.pending.get().saturating_sub(1)) == 1 {
            let _ = check(unsafe { sys::napi_unref_threadsafe_function(env.raw(), self.queue.raw()) });
        }
    }
}

/// On the JavaScript thread: what another thread sent.
fn receive(env: Env, message: Message) {
    let (call, settle) = match message {
        Message::Settle(call, settle) => (call, settle),
        Message::Poll(call) => {
            let mut state = call.state();
            let work = match std::mem::replace(&mut *state, State::Polling { yielded: false, woken: false }) {
                State::Queued(work) => work,
                // Only a call's move into `Queued` sends `Poll`; anything else is left as it is.
                other => {
                    *state = other;
                    return;
                }
            };
            drop(state);
            match call.poll_here(work) {
                Some(settle) => (call, settle),
                None => return,
            }
        }
    };
    call.settle(env.raw(), settle);
    if let Ok(event_loop) = event_loop(&env) {
        event_loop.ended(&env);
    }
}
