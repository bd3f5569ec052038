//! Writes a streamed answer in as few socket writes as its arrival allows.
//!
//! The upstream's connection is driven by its own task, which hands the stream's body over one
//! chunk at a time and decodes the next only after the previous one was taken. A chunk given to
//! actix-web at once is written at once when the next poll finds nothing: a stream whose events
//! all sat in the socket's buffer left in one `sendto` per event (measured: 10 a request for the
//! benchmark's 8-event answer, where nginx sends what it read in one). [`Gather`] holds a chunk
//! for one turn of the worker (every task that is ready runs, the upstream's connection among
//! them), takes whatever came meanwhile, and passes the lot on when the upstream has nothing
//! more at hand; actix-web then writes them together. A chunk waits for one turn of the worker's
//! scheduler, never for the network: an upstream that pauses between events has each one sent
//! as soon as it is read.

use bytes::Bytes;
use futures_util::Stream;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// At most this many bytes are held before they are passed on, however fast they come.
pub const MAX_HELD_BYTES: usize = 64 * 1024;
/// At most this many chunks are held before they are passed on.
pub const MAX_HELD_CHUNKS: usize = 64;

pub struct Gather<S, E> {
    inner: S,
    held: VecDeque<Bytes>,
    held_bytes: usize,
    /// Passing the held chunks on (each poll returns the next one until none is left).
    releasing: bool,
    /// The turn given to the worker's other tasks before the inner stream is polled again.
    turn: Option<Pin<Box<dyn Future<Output = ()>>>>,
    /// How the inner stream ended (an error, or `None` for its end), returned after the chunks
    /// that came before it.
    end: Option<Option<Result<Bytes, E>>>,
    done: bool,
}

impl<S, E> Gather<S, E> {
    fn new(inner: S) -> Self {
        Gather {
            inner,
            held: VecDeque::new(),
            held_bytes: 0,
            releasing: false,
            turn: None,
            end: None,
            done: false,
        }
    }
}

impl<S, E> Gather<S, E>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Unpin,
{
    /// The body of a streamed answer, its first events gathered ([`Gather::prime`]): await it
    /// just before the response (and so its head) is handed to actix-web.
    pub async fn primed(inner: S) -> Self {
        let mut body = Gather::new(inner);
        body.prime().await;
        body
    }

    /// Keeps `chunk` for the next write; true when the held chunks reached a cap and must go.
    fn hold(&mut self, chunk: Bytes) -> bool {
        self.held_bytes += chunk.len();
        self.held.push_back(chunk);
        self.held_bytes >= MAX_HELD_BYTES || self.held.len() >= MAX_HELD_CHUNKS
    }

    /// Before the answer's head is written: gathers what the upstream has at hand, so that the
    /// first poll after the head passes it on at once and actix-web writes the two together.
    /// hyper decodes an answer's body only once the body is polled, so without this that first
    /// poll always found nothing and the head left on its own (one more write a stream). A
    /// stream with nothing after one turn of the worker (an upstream still thinking) is left
    /// as it is: its head goes at once.
    async fn prime(&mut self) {
        let mut waited = false;
        loop {
            let polled = std::future::poll_fn(|cx| {
                Poll::Ready(if self.done || self.end.is_some() {
                    None
                } else {
                    Some(Pin::new(&mut self.inner).poll_next(cx))
                })
            })
            .await;
            match polled {
                None => return,
                Some(Poll::Ready(Some(Ok(chunk)))) => {
                    if self.hold(chunk) {
                        self.releasing = true;
                        return;
                    }
                }
                Some(Poll::Ready(end)) => {
                    self.end = Some(end);
                    self.releasing = true;
                    return;
                }
                Some(Poll::Pending) => {
                    if !self.held.is_empty() {
                        self.releasing = true;
                        return;
                    }
                    if waited {
                        return;
                    }
                    waited = true;
                }
            }
            tokio::task::yield_now().await;
        }
    }
}

impl<S, E> Stream for Gather<S, E>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.releasing {
                if let Some(chunk) = this.held.pop_front() {
                    this.held_bytes -= chunk.len();
                    return Poll::Ready(Some(Ok(chunk)));
                }
                this.releasing = false;
                if let Some(end) = this.end.take() {
                    this.done = true;
                    return Poll::Ready(end);
                }
            }
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(turn) = this.turn.as_mut() {
                if turn.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.turn = None;
            }
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    if this.hold(chunk) {
                        this.releasing = true;
                    } else {
                        // Woken once the tasks that are ready now have run (tokio defers the
                        // wake-up of a yielding task until then).
                        this.turn = Some(Box::pin(tokio::task::yield_now()));
                    }
                }
                Poll::Ready(end) => {
                    this.end = Some(end);
                    this.releasing = true;
                }
                Poll::Pending => {
                    if this.held.is_empty() {
                        return Poll::Pending;
                    }
                    this.releasing = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{FutureExt, StreamExt};
    use std::time::Duration;

    fn chunk(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    /// The upstream connection as hyper drives it: a task that hands over the next chunk only
    /// once the previous one was taken.
    fn connection(
        chunks: Vec<Bytes>,
        hold_after: Option<(usize, tokio::sync::oneshot::Receiver<()>)>,
    ) -> impl Stream<Item = Result<Bytes, ()>> + Unpin {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, ()>>(1);
        tokio::spawn(async move {
            let mut hold_after = hold_after;
            for (i, c) in chunks.into_iter().enumerate() {
                if let Some((n, _)) = &hold_after {
                    if *n == i {
                        let (_, wait) = hold_after.take().expect("checked");
                        let _ = wait.await;
                    }
                }
                if tx.send(Ok(c)).await.is_err() {
                    return;
                }
            }
        });
        Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        }))
    }

    #[tokio::test]
    async fn chunks_the_upstream_has_at_hand_are_passed_on_together() {
        let parts = vec![
            chunk("data: 1\n\n"),
            chunk("data: 2\n\n"),
            chunk("data: [DONE]\n\n"),
        ];
        let mut g = Gather::new(connection(parts.clone(), None));
        assert_eq!(g.next().await, Some(Ok(parts[0].clone())));
        // The rest were gathered with the first: ready without another turn of the runtime
        // (passed straight through, the second would only exist after the connection ran).
        assert_eq!(g.next().now_or_never(), Some(Some(Ok(parts[1].clone()))));
        assert_eq!(g.next().now_or_never(), Some(Some(Ok(parts[2].clone()))));
        assert_eq!(g.next().await, None);
        assert_eq!(g.next().await, None);
    }

    #[tokio::test]
    async fn primed_the_first_chunks_are_at_hand_when_the_head_is_written() {
        let parts = vec![chunk("data: 1\n\n"), chunk("data: 2\n\n")];
        let mut g = Gather::primed(connection(parts.clone(), None)).await;
        // The first poll (actix-web's, right after the head) finds the events ready: without
        // `prime` it found nothing, and the head left alone.
        assert_eq!(g.next().now_or_never(), Some(Some(Ok(parts[0].clone()))));
        assert_eq!(g.next().now_or_never(), Some(Some(Ok(parts[1].clone()))));
        assert_eq!(g.next().await, None);
        // What priming took is passed on, not lost, when the stream had already ended.
        let g = Gather::primed(futures_util::stream::iter(vec![Ok::<_, ()>(chunk("a"))])).await;
        let got: Vec<_> = g.collect().await;
        assert_eq!(got, vec![Ok(chunk("a"))]);
    }

    #[tokio::test]
    async fn priming_does_not_wait_for_an_upstream_still_thinking() {
        let (go, wait) = tokio::sync::oneshot::channel();
        let parts = vec![chunk("data: 1\n\n")];
        // Nothing comes before `go`: the head must not wait for the first event.
        let primed = tokio::time::timeout(
            Duration::from_secs(5),
            Gather::primed(connection(parts.clone(), Some((0, wait)))),
        )
        .await;
        let mut g = primed.expect("priming waited for the upstream");
        go.send(()).expect("the connection waits");
        assert_eq!(g.next().await, Some(Ok(parts[0].clone())));
        assert_eq!(g.next().await, None);
    }

    #[tokio::test]
    async fn a_chunk_is_not_held_while_the_upstream_is_quiet() {
        let (go, wait) = tokio::sync::oneshot::channel();
        let parts = vec![chunk("data: 1\n\n"), chunk("data: 2\n\n")];
        let mut g = Gather::new(connection(parts.clone(), Some((1, wait))));
        // The upstream says nothing more until `go`: the first event still leaves.
        let first = tokio::time::timeout(Duration::from_secs(5), g.next()).await;
        assert_eq!(first, Ok(Some(Ok(parts[0].clone()))));
        assert!(g.next().now_or_never().is_none(), "nothing more has come");
        go.send(()).expect("the connection waits");
        assert_eq!(g.next().await, Some(Ok(parts[1].clone())));
        assert_eq!(g.next().await, None);
    }

    #[tokio::test]
    async fn an_error_or_the_end_comes_after_the_chunks_before_it() {
        let items: Vec<Result<Bytes, &str>> = vec![Ok(chunk("a")), Ok(chunk("b")), Err("cut")];
        let got: Vec<_> = Gather::new(futures_util::stream::iter(items.clone()))
            .collect()
            .await;
        assert_eq!(got, items);
        let got: Vec<_> = Gather::new(futures_util::stream::iter(vec![Ok::<_, ()>(chunk("a"))]))
            .collect()
            .await;
        assert_eq!(got, vec![Ok(chunk("a"))]);
    }

    #[tokio::test]
    async fn a_flood_is_passed_on_at_the_cap() {
        // Always ready: without the cap the first chunk would never leave.
        let kb = Bytes::from(vec![b'x'; 1024]);
        let flood = futures_util::stream::repeat(Ok::<_, ()>(kb.clone()));
        let mut g = Gather::new(flood);
        let first = tokio::time::timeout(Duration::from_secs(5), g.next()).await;
        assert_eq!(first, Ok(Some(Ok(kb.clone()))));
        // The rest of that batch follows at once; then the next batch is gathered.
        let mut at_once = 1;
        while let Some(Some(Ok(_))) = g.next().now_or_never() {
            at_once += 1;
            if at_once > 2 * MAX_HELD_CHUNKS {
                break;
            }
        }
        assert_eq!(at_once, MAX_HELD_BYTES.min(MAX_HELD_CHUNKS * 1024) / 1024);
    }
}
