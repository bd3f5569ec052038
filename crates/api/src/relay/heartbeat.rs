//! Keeps a quiet stream alive: after a key's heartbeat start time (30 to 90 s) without output,
//! a keep-alive comment (`: keep-alive`, ignored by SSE clients) every 5 seconds until the
//! upstream speaks again, so proxies and clients do not drop a slow answer.

use bytes::Bytes;
use futures_util::Stream;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

pub const EVERY: Duration = Duration::from_secs(5);
pub const COMMENT: &[u8] = b": keep-alive\n\n";

pub struct Heartbeat<S> {
    inner: S,
    after: Duration,
    timer: Pin<Box<Sleep>>,
}

impl<S> Heartbeat<S> {
    pub fn new(inner: S, after: Duration) -> Self {
        Heartbeat {
            inner,
            after,
            timer: Box::pin(tokio::time::sleep(after)),
        }
    }
}

impl<S, E> Stream for Heartbeat<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(item) => {
                let next = Instant::now() + self.after;
                self.timer.as_mut().reset(next);
                Poll::Ready(item)
            }
            Poll::Pending => {
                if self.timer.as_mut().poll(cx).is_ready() {
                    self.timer.as_mut().reset(Instant::now() + EVERY);
                    return Poll::Ready(Some(Ok(Bytes::from_static(COMMENT))));
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test(start_paused = true)]
    async fn beats_only_after_silence_and_stops_when_data_flows() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, ()>>();
        let inner = tokio_stream_from(rx);
        let mut s = Heartbeat::new(inner, Duration::from_secs(30));
        tx.send(Ok(Bytes::from_static(b"data: 1\n\n"))).unwrap();
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(b"data: 1\n\n")
        );
        // 30 s of silence: the first beat, then one every 5 s.
        let t0 = Instant::now();
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(COMMENT)
        );
        assert_eq!(t0.elapsed(), Duration::from_secs(30));
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(COMMENT)
        );
        assert_eq!(t0.elapsed(), Duration::from_secs(35));
        // Data resets the clock.
        tx.send(Ok(Bytes::from_static(b"data: 2\n\n"))).unwrap();
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(b"data: 2\n\n")
        );
        drop(tx);
        assert!(s.next().await.is_none(), "ends with the inner stream");
    }

    fn tokio_stream_from(
        mut rx: tokio::sync::mpsc::UnboundedReceiver<Result<Bytes, ()>>,
    ) -> Pin<Box<dyn Stream<Item = Result<Bytes, ()>>>> {
        Box::pin(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }
}
