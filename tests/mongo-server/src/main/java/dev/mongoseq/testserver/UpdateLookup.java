package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.CollectionBackedOplog;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.oplog.OplogPosition;

import java.lang.reflect.Field;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Patch 9, speed only (tests/FAKE-SERVER.md row 22): a change stream opened with
 * `fullDocument: "updateLookup"` looks up each update event's document by reading the whole
 * collection into a list and searching it, once per event and again at every getMore that
 * passes the event: a drain of 20,000 issued orders did not finish in 120 s. Real MongoDB looks
 * the document up by `_id` through its index. Here the fake's own stream is opened without the
 * lookup (an update event then carries its `$set`/`$unset` contents, which the fake also hands
 * out when the document is gone), and each update event gets the document through the `_id`
 * index before the stream's own stages run. The fake's update events do not carry the
 * document's `_id` (FAKE-SERVER.md row 8): it is recorded per oplog entry when the update is
 * logged, by the entry's increment (unique across the fake's oplog; commands run one at a time).
 */
final class UpdateLookup extends CollectionBackedOplog {
    private static final Field CURSOR_STREAM = PatchedBackend.accessibleField(OplogCursor.class, "oplogStream");
    private static final Field CURSOR_POSITION = PatchedBackend.accessibleField(OplogCursor.class, "position");
    private static final Aggregation NO_STAGES = Aggregation.fromPipeline(List.of(), null, null, null, null);

    private final MongoBackend backend;
    private final CursorRegistry cursors;
    /** The updated document's `_id` of each update entry, by the entry's increment. */
    private final Map<Integer, Object> updatedIds = new ConcurrentHashMap<>();

    /** Everything the patch reads reflectively is reachable (else the fake's oplog is used as it is). */
    static boolean available() {
        return CURSOR_STREAM != null && CURSOR_POSITION != null && PatchedBackend.oplogClockReachable();
    }

    UpdateLookup(MongoBackend backend, MongoCollection<Document> collection, CursorRegistry cursors) {
        super(backend, collection, cursors);
        this.backend = backend;
        this.cursors = cursors;
    }

    @Override
    public void handleUpdate(String namespace, Document selector, Document query, List<Object> modifiedIds) {
        int before = PatchedBackend.oplogNow(this).getInc();
        super.handleUpdate(namespace, selector, query, modifiedIds);
        // The fake logs one entry per modified document, in order, each with the next increment.
        int logged = PatchedBackend.oplogNow(this).getInc() - before;
        if (logged == 0) return; // the oplog's own collection: not logged
        if (logged != modifiedIds.size()) {
            throw new IllegalStateException("test server: an update logged " + logged + " oplog entries for "
                + modifiedIds.size() + " documents; UpdateLookup cannot tell their _ids");
        }
        for (int i = 0; i < modifiedIds.size(); i++) updatedIds.put(before + 1 + i, modifiedIds.get(i));
    }

    @Override
    @SuppressWarnings("unchecked")
    public Cursor createCursor(Document changeStream, String namespace, Aggregation aggregation) {
        if (!"updateLookup".equals(changeStream.get("fullDocument"))) {
            return super.createCursor(changeStream, namespace, aggregation);
        }
        Document withoutLookup = new Document(changeStream);
        withoutLookup.remove("fullDocument");
        Cursor plain = super.createCursor(withoutLookup, namespace, NO_STAGES);
        if (!(plain instanceof OplogCursor)) return plain;
        try {
            Function<OplogPosition, Stream<Document>> events = (Function<OplogPosition, Stream<Document>>) CURSOR_STREAM.get(plain);
            OplogPosition start = (OplogPosition) CURSOR_POSITION.get(plain);
            cursors.remove(plain);
            OplogCursor cursor = new OplogCursor(plain.getId(),
                position -> aggregation.runStagesAsStream(events.apply(position).map(event -> lookUp(event, namespace))), start);
            cursors.add(cursor);
            return cursor;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("test server: cannot wrap the change stream's cursor", e);
        }
    }

    /** An update event with the document as it is now, when it still exists. */
    private Document lookUp(Document event, String namespace) {
        if (!"update".equals(event.get("operationType")) || !(event.get("_id") instanceof Document token)) return event;
        int increment = (int) Long.parseUnsignedLong(String.valueOf(token.get("_data")), 16);
        Object id = updatedIds.get(increment);
        if (id == null) throw new IllegalStateException("test server: no _id recorded for the update entry " + increment);
        int dot = namespace.indexOf('.');
        MongoDatabase database = backend.resolveDatabase(namespace.substring(0, dot));
        MongoCollection<?> collection = database.resolveCollection(namespace.substring(dot + 1), false);
        if (collection == null) return event;
        Iterator<Document> found = collection.handleQuery(new Document("_id", id)).iterator();
        if (found.hasNext()) event.put("fullDocument", found.next());
        return event;
    }
}
