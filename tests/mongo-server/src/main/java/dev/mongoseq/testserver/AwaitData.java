package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.message.ClientRequest;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.group.ChannelGroup;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Patch 18, a change stream's getMore waits for an event (tests/FAKE-SERVER.md row 6): a real
 * server holds a getMore on a tailable awaitData cursor (every change stream's) until an event
 * comes or `maxTimeMS` passes (the drivers' `maxAwaitTimeMS`; 1 s when the getMore has none, as
 * since MongoDB 3.2), and only then answers an empty batch. The fake answers at once, so drivers
 * poll in a tight loop and every figure of commands per document counts those polls.
 *
 * Commands run one at a time (PatchedBackend) on netty's event loops, each of which serves many
 * connections: a getMore must not wait holding the lock (no insert could arrive) nor block its
 * event loop (the other connections on it would stall). So the wait happens between attempts:
 * an empty answer on a change stream's cursor is not sent; the getMore is kept and run again,
 * on its connection's event loop, when a command has added to the oplog (any event may be one
 * the stream's `$match` keeps), and once more at its deadline, whose answer goes out whatever it
 * holds. Each attempt is the fake's own getMore, as if the driver had sent it again.
 */
final class AwaitData {
    /** A getMore without `maxTimeMS` on a tailable awaitData cursor waits this long (SERVER-19665). */
    static final long DEFAULT_AWAIT_MS = 1000;

    private static final Method HANDLE_MESSAGE = handleMessage();

    private final PatchedBackend backend;
    /** The getMores waiting for the oplog to move past what they saw. */
    private final Set<Waiting> waiting = ConcurrentHashMap.newKeySet();

    AwaitData(PatchedBackend backend) {
        this.backend = backend;
        backend.afterEveryCommand(this::oplogMayHaveGrown);
    }

    /** The fake's own request handler, with change streams' getMores waiting as described above. */
    MongoDatabaseHandler handler(ChannelGroup channels) {
        return new Handler(channels);
    }

    private final class Handler extends MongoDatabaseHandler {
        Handler(ChannelGroup channels) {
            super(backend, channels);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext context, ClientRequest request) {
            if (HANDLE_MESSAGE == null || !(request instanceof MongoMessage message)
                    || !"getMore".equals(firstKey(message.getDocument()))) {
                super.channelRead0(context, request);
                return;
            }
            long awaitMs = message.getDocument().get("maxTimeMS") instanceof Number max && max.longValue() > 0
                ? max.longValue() : DEFAULT_AWAIT_MS;
            attempt(context, message, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(awaitMs));
        }

        /** Runs the getMore; sends its answer, or waits for the oplog to grow or the deadline. */
        private void attempt(ChannelHandlerContext context, MongoMessage getMore, long deadline) {
            if (!context.channel().isActive()) return; // the client is gone: nobody to answer
            int seen = backend.oplogEntries();
            MongoMessage answer = run(getMore);
            long left = deadline - System.nanoTime();
            if (left < TimeUnit.MILLISECONDS.toNanos(1) || !emptyChangeStreamBatch(answer)) {
                context.channel().writeAndFlush(answer);
                return;
            }
            Waiting wait = new Waiting(seen, () -> attempt(context, getMore, deadline), context);
            waiting.add(wait);
            wait.timeout = context.executor().schedule(wait::retry, left, TimeUnit.NANOSECONDS);
            // An event logged between the attempt and now would have found no one to wake.
            if (backend.oplogEntries() != seen) wait.retry();
        }

        private MongoMessage run(MongoMessage getMore) {
            try {
                return (MongoMessage) HANDLE_MESSAGE.invoke(this, getMore);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof RuntimeException cause) throw cause;
                throw new IllegalStateException(e.getCause());
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }

        /** An answer with no events from a change stream's cursor that stays open. */
        private boolean emptyChangeStreamBatch(MongoMessage answer) {
            return answer.getDocument().get("cursor") instanceof Document cursor
                && cursor.get("id") instanceof Number id && id.longValue() != 0
                && cursor.get("nextBatch") instanceof List<?> batch && batch.isEmpty()
                && backend.isChangeStreamCursor(id.longValue());
        }
    }

    /** A getMore kept for later: run again once, by whichever comes first of a write and its deadline. */
    private final class Waiting {
        final int seen;
        final Runnable again;
        final ChannelHandlerContext context;
        volatile ScheduledFuture<?> timeout;

        Waiting(int seen, Runnable again, ChannelHandlerContext context) {
            this.seen = seen;
            this.again = again;
            this.context = context;
        }

        void retry() {
            if (!waiting.remove(this)) return;
            ScheduledFuture<?> pending = timeout;
            if (pending != null) pending.cancel(false);
            if (context.executor().inEventLoop()) again.run();
            else context.executor().execute(again);
        }
    }

    /** After every command, outside the command lock: wakes the getMores whose oplog has grown. */
    private void oplogMayHaveGrown() {
        if (waiting.isEmpty()) return;
        int now = backend.oplogEntries();
        for (Waiting wait : waiting) {
            if (wait.seen != now) wait.retry();
        }
    }

    private static String firstKey(Document document) {
        return document.isEmpty() ? null : document.keySet().iterator().next();
    }

    /** MongoDatabaseHandler.handleMessage (package-private): a request's answer, errors included. */
    private static Method handleMessage() {
        try {
            Method method = MongoDatabaseHandler.class.getDeclaredMethod("handleMessage", MongoMessage.class);
            method.setAccessible(true);
            return method;
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("test server: cannot reach MongoDatabaseHandler.handleMessage: " + e + "; getMores answer at once");
            return null;
        }
    }
}
