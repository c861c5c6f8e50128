//! The accept loop the CLI's HTTP servers share (`mcp --http`, `ui`): every connection served
//! as HTTP/1.1 on a task of its own, until the process is interrupted (Ctrl-C).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use tokio::net::TcpListener;

/// Serves `listener` until interrupted; each request is answered by `answer(state, request)`.
pub(crate) async fn serve<S, F, Fut, B>(listener: TcpListener, state: Arc<S>, answer: F) -> anyhow::Result<()>
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, Request<Incoming>) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("accepting a connection: {error}");
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let answered = answer(state.clone(), request);
                async move { Ok::<_, Infallible>(answered.await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(error) = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await {
                tracing::debug!("HTTP connection: {error}");
            }
        });
    }
}
