//! Layers that look at a request before its route and then step aside.
//!
//! axum's `from_fn` middleware keeps, for as long as the response takes (a
//! long poll's 120 s), its own boxed future with room for the request, a
//! boxed copy of the rest of the stack and that copy's boxed call: about
//! 1.5 KiB a layer a waiting agent holds (issue 50, massif). These hold the
//! inner future alone once the request passed: [`Check`] decides from the
//! request as it is, [`AsyncCheck`] may wait first (a token looked up) and
//! changes the request (the caller recorded), [`Observe`] sees the
//! response.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{BoxFuture, Either, Ready};
use pin_project_lite::pin_project;
use tower::{Layer, Service};

/// One of the gates below as a layer in front of a route.
#[derive(Clone)]
pub struct Gate<G>(pub G);

impl<S, G: Clone> Layer<S> for Gate<G> {
    type Service = Gated<S, G>;

    fn layer(&self, inner: S) -> Self::Service {
        Gated {
            inner,
            gate: self.0.clone(),
        }
    }
}

/// A route behind its gate.
#[derive(Clone)]
pub struct Gated<S, G> {
    inner: S,
    gate: G,
}

/// A synchronous check: `Some` is the response given instead of the route's.
#[derive(Clone)]
pub struct Check<F>(pub F);

impl<S, F> Service<Request> for Gated<S, Check<F>>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    F: Fn(&Request) -> Option<Response>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match (self.gate.0)(&request) {
            None => Either::Right(self.inner.call(request)),
            Some(response) => Either::Left(futures_util::future::ready(Ok(response))),
        }
    }
}

/// An asynchronous check: resolves to the request to pass on (it may have
/// changed) or to the response given instead.
#[derive(Clone)]
pub struct AsyncCheck<F>(pub F);

/// What [`AsyncCheck`] runs: boxed, since it is done before the route
/// runs and the box goes with it.
pub type Checking = BoxFuture<'static, Result<Request, Response>>;

impl<S, F> Service<Request> for Gated<S, AsyncCheck<F>>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone,
    F: Fn(Request) -> Checking,
{
    type Response = Response;
    type Error = Infallible;
    type Future = AsyncCheckFuture<S>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service made ready goes with the request; a clone stays.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        AsyncCheckFuture::Checking {
            check: (self.gate.0)(request),
            inner: Some(inner),
        }
    }
}

pin_project! {
    /// [`AsyncCheck`]'s future: the check, then the route's own future.
    #[project = AsyncCheckProjection]
    pub enum AsyncCheckFuture<S: Service<Request>> {
        Checking { check: Checking, inner: Option<S> },
        Passed { #[pin] future: S::Future },
    }
}

impl<S> Future for AsyncCheckFuture<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                AsyncCheckProjection::Checking { check, inner } => {
                    let request = match ready!(check.as_mut().poll(cx)) {
                        Ok(request) => request,
                        Err(response) => return Poll::Ready(Ok(response)),
                    };
                    let Some(mut inner) = inner.take() else {
                        unreachable!("the check resolves once: the state moves on")
                    };
                    let future = inner.call(request);
                    self.set(Self::Passed { future });
                }
                AsyncCheckProjection::Passed { future } => return future.poll(cx),
            }
        }
    }
}

/// What [`Observe`] does with each request and its response.
pub trait Observer: Clone {
    /// What it keeps from the request until the response.
    type Seen;
    /// Runs on the request, before the route.
    fn start(&self, request: &Request) -> Self::Seen;
    /// Runs on the response.
    fn finish(&self, seen: Self::Seen, response: &Response);
}

/// Sees each request and its response.
#[derive(Clone)]
pub struct Observe<O>(pub O);

impl<S, O> Service<Request> for Gated<S, Observe<O>>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    O: Observer,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ObserveFuture<S::Future, O>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let seen = self.gate.0.start(&request);
        ObserveFuture {
            future: self.inner.call(request),
            seen: Some((seen, self.gate.0.clone())),
        }
    }
}

pin_project! {
    /// [`Observe`]'s future: the route's, then `finish`.
    pub struct ObserveFuture<Fut, O: Observer> {
        #[pin]
        future: Fut,
        seen: Option<(O::Seen, O)>,
    }
}

impl<Fut, O> Future for ObserveFuture<Fut, O>
where
    Fut: Future<Output = Result<Response, Infallible>>,
    O: Observer,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(response) = ready!(this.future.poll(cx));
        if let Some((seen, observer)) = this.seen.take() {
            observer.finish(seen, &response);
        }
        Poll::Ready(Ok(response))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Body;
    use axum::http::StatusCode;
    use tower::{ServiceBuilder, ServiceExt as _, service_fn};

    use super::*;

    /// The route: answers 200, counting its calls.
    fn route(
        calls: &Arc<AtomicUsize>,
    ) -> impl Service<Request, Response = Response, Error = Infallible, Future: Send> + Clone {
        let calls = calls.clone();
        service_fn(move |_request: Request| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Infallible>(Response::new(Body::empty())) }
        })
    }

    fn request(path: &str) -> Request {
        Request::builder().uri(path).body(Body::empty()).unwrap()
    }

    fn refused() -> Response {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::FORBIDDEN;
        response
    }

    /// `/no` is refused before the route; `/yes` reaches it, once.
    async fn refuses_no_and_passes_yes<S>(service: S, calls: &AtomicUsize)
    where
        S: Service<Request, Response = Response, Error = Infallible> + Clone,
    {
        let no = service.clone().oneshot(request("/no")).await.unwrap();
        assert_eq!(no.status(), StatusCode::FORBIDDEN);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        let yes = service.oneshot(request("/yes")).await.unwrap();
        assert_eq!(yes.status(), StatusCode::OK);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_check_refuses_without_calling_the_route_and_passes_what_it_allows() {
        let calls = Arc::new(AtomicUsize::new(0));
        let service = ServiceBuilder::new()
            .layer(Gate(Check(|r: &Request| {
                (r.uri().path() == "/no").then(refused)
            })))
            .service(route(&calls));
        refuses_no_and_passes_yes(service, &calls).await;
    }

    #[tokio::test]
    async fn an_async_check_hands_the_route_the_request_it_changed_or_answers_instead() {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(AtomicUsize::new(0));
        let counted = seen.clone();
        let inner = route(&calls);
        let service = ServiceBuilder::new()
            .layer(Gate(AsyncCheck(|mut r: Request| -> Checking {
                Box::pin(async move {
                    tokio::task::yield_now().await; // resolves on a later poll
                    if r.uri().path() == "/no" {
                        return Err(refused());
                    }
                    r.extensions_mut().insert(7_usize);
                    Ok(r)
                })
            })))
            .service(service_fn(move |r: Request| {
                counted.store(*r.extensions().get::<usize>().unwrap(), Ordering::SeqCst);
                inner.clone().oneshot(r)
            }));
        refuses_no_and_passes_yes(service, &calls).await;
        assert_eq!(
            seen.load(Ordering::SeqCst),
            7,
            "the route saw the changed request"
        );
    }

    /// Notes each request's path with its response's status.
    #[derive(Clone, Default)]
    struct Log(Arc<std::sync::Mutex<Vec<(String, StatusCode)>>>);

    impl Observer for Log {
        type Seen = String;

        fn start(&self, request: &Request) -> String {
            request.uri().path().to_owned()
        }

        fn finish(&self, path: String, response: &Response) {
            self.0.lock().unwrap().push((path, response.status()));
        }
    }

    #[tokio::test]
    async fn an_observer_sees_each_response_once_with_what_it_took_from_the_request() {
        let calls = Arc::new(AtomicUsize::new(0));
        let observed = Log::default();
        let service = ServiceBuilder::new()
            .layer(Gate(Observe(observed.clone())))
            .service(route(&calls));
        service.clone().oneshot(request("/a")).await.unwrap();
        service.oneshot(request("/b")).await.unwrap();
        assert_eq!(
            *observed.0.lock().unwrap(),
            [
                ("/a".to_owned(), StatusCode::OK),
                ("/b".to_owned(), StatusCode::OK)
            ]
        );
    }
}
