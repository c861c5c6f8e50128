//! The accept loop the CLI's HTTP servers share (`mcp --http`, `ui`): every connection served
//! as HTTP/1.1 on a task of its own, until the process is asked to stop (SIGTERM or Ctrl-C,
//! [`Shutdown`]). Then it accepts no more connections, answers a request that arrives on an
//! open one with 503, waits for the answers of the requests that may write (every method but
//! `GET` and `HEAD`: a tool call's operation commits or rolls back whole, and its caller gets
//! the answer) — at most [`DRAIN`], or until a second signal — and returns. Reads are not
//! waited for: an MCP client's event stream (a `GET` held open) never ends by itself.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{Either, Full};
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode, header};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::shutdown::Shutdown;

/// How long a stop waits at most for the answers of the writing requests in flight: longer
/// than a plugin call's deadline (500 ms by default) and the database's busy wait for a turn.
pub(crate) const DRAIN: Duration = Duration::from_secs(10);

/// The writing requests whose answers are not yet sent, and whether the server is stopping.
struct InFlight {
    writing: watch::Sender<usize>,
    stopping: AtomicBool,
}

/// Held by a writing request until its answer's body is sent (or dropped).
struct Answering(Arc<InFlight>);

impl Answering {
    fn start(in_flight: &Arc<InFlight>) -> Answering {
        in_flight.writing.send_modify(|n| *n += 1);
        Answering(in_flight.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.writing.send_modify(|n| *n -= 1);
    }
}

/// A response body that holds its request's [`Answering`] until it is done.
struct Tracked<B> {
    body: B,
    _answering: Option<Answering>,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// The answer to a request that arrives while the server stops.
fn stopping() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"the server is stopping\n")));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    response
}

/// Serves `listener` until asked to stop (see the module's documentation); each request is
/// answered by `answer(state, request)`.
pub(crate) async fn serve<S, F, Fut, B>(listener: TcpListener, state: Arc<S>, answer: F) -> anyhow::Result<()>
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, Request<Incoming>) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: Body<Data = Bytes> + Unpin + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut shutdown = Shutdown::listen()?;
    let in_flight = Arc::new(InFlight { writing: watch::Sender::new(0), stopping: AtomicBool::new(false) });
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("accepting a connection: {error}");
                    continue;
                }
            },
            () = shutdown.requested() => break,
        };
        // Answers go out in several writes (an event stream's head, its events, its end): with
        // Nagle's algorithm on, each write after the first waited for the client's delayed
        // ACK, about 40 ms a call.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY: {error}");
        }
        let (state, in_flight) = (state.clone(), in_flight.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let (state, in_flight) = (state.clone(), in_flight.clone());
                async move {
                    if in_flight.stopping.load(Ordering::SeqCst) {
                        return Ok::<_, Infallible>(stopping().map(Either::Right));
                    }
                    let writes = !matches!(*request.method(), Method::GET | Method::HEAD);
                    let answering = writes.then(|| Answering::start(&in_flight));
                    let response = answer(state, request).await;
                    Ok(response.map(|body| Either::Left(Tracked { body, _answering: answering })))
                }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(error) = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await {
                tracing::debug!("HTTP connection: {error}");
            }
        });
    }
    drop(listener);
    in_flight.stopping.store(true, Ordering::SeqCst);
    let mut writing = in_flight.writing.subscribe();
    let pending = *writing.borrow();
    if pending > 0 {
        tracing::info!("stopping: answering {pending} request(s) in flight first");
    }
    tokio::select! {
        _ = writing.wait_for(|n| *n == 0) => {}
        () = tokio::time::sleep(DRAIN) => {
            tracing::warn!("stopping with {} request(s) unanswered after {DRAIN:?}", *in_flight.writing.borrow());
        }
        () = shutdown.requested() => {
            tracing::warn!("asked again to stop: {} request(s) left unanswered", *in_flight.writing.borrow());
        }
    }
    Ok(())
}
