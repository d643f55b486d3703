package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.oplog.CollectionBackedOplog;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.oplog.OplogPosition;

import java.lang.reflect.Field;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The fake's oplog with its change streams read the way a real server reads them, for speed
 * only (tests/FAKE-SERVER.md rows 6 and 22); the events are the fake's own.
 *
 * Patch 10, reads from the position: every aggregate and getMore of the fake's change streams
 * reads the whole oplog collection (copying every entry) and then keeps the entries after the
 * stream's position (an empty getMore: 1.3 ms on a fresh server, 8.8 ms after 100,000 writes).
 * A real server's cursor reads on from where it is. Here the read starts at the stream's
 * position, found in the oplog's timestamps (OplogEntries); the fake's own filters still run.
 *
 * Patch 14 (withNamespace): events carry `ns`, as a real server's do.
 *
 * Patch 9, update lookups by `_id`: a change stream opened with `fullDocument: "updateLookup"`
 * looks up each update event's document by reading the whole collection into a list and
 * searching it, once per event and again at every getMore that passes the event: a drain of
 * 20,000 issued orders did not finish in 120 s. Real MongoDB looks the document up by `_id`
 * through its index. Here the fake's own stream is opened without the lookup (an update event
 * then carries its `$set`/`$unset` contents, which the fake also hands out when the document is
 * gone), and each update event gets the document through the `_id` index before the stream's own
 * stages run. The fake's update events do not carry the document's `_id` (FAKE-SERVER.md row 8):
 * it is recorded per oplog entry when the update is logged, by the entry's increment (unique
 * across the fake's oplog; commands run one at a time).
 *
 * Patch 24, post-images (tests/FAKE-SERVER.md row 19): a stream opened with `fullDocument:
 * "whenAvailable"`/`"required"` gets, on a real MongoDB 6.0+ server whose collection has
 * `changeStreamPreAndPostImages` enabled, each update's document as that update left it; the
 * fake ignores the option. Here, on such a collection (collMod, PreImages), the document is kept
 * when its update is logged (commands run one at a time: it is the update's result), by the
 * entry's increment, and the update events of those streams carry it; without one, `null`
 * (whenAvailable) or the error a real server raises (required).
 */
final class IndexedOplog extends CollectionBackedOplog {
    private static final Field CURSOR_STREAM = PatchedBackend.accessibleField(OplogCursor.class, "oplogStream");
    private static final Field CURSOR_POSITION = PatchedBackend.accessibleField(OplogCursor.class, "position");
    private static final Aggregation NO_STAGES = Aggregation.fromPipeline(List.of(), null, null, null, null);

    private final MongoBackend backend;
    private final OplogEntries entries;
    private final CursorRegistry cursors;
    /** The updated document's `_id` of each update entry, by the entry's increment. */
    private final Map<Integer, Object> updatedIds = new ConcurrentHashMap<>();
    /** Patch 24: the document each update left, by the entry's increment (collections keeping images). */
    private final Map<Integer, Document> postImages = new ConcurrentHashMap<>();
    private final Predicate<String> keepsImages;

    /** Everything the patch reads reflectively is reachable (else the fake's oplog is used as it is). */
    static boolean available() {
        return CURSOR_STREAM != null && CURSOR_POSITION != null && PatchedBackend.oplogClockReachable();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    IndexedOplog(MongoBackend backend, OplogEntries entries, CursorRegistry cursors, Predicate<String> keepsImages) {
        super(backend, (MongoCollection) entries, cursors);
        this.backend = backend;
        this.entries = entries;
        this.cursors = cursors;
        this.keepsImages = keepsImages;
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
                + modifiedIds.size() + " documents; IndexedOplog cannot tell their _ids");
        }
        for (int i = 0; i < modifiedIds.size(); i++) updatedIds.put(before + 1 + i, modifiedIds.get(i));
        if (!keepsImages.test(namespace)) return;
        for (int i = 0; i < modifiedIds.size(); i++) {
            Document image = current(namespace, modifiedIds.get(i));
            if (image != null) postImages.put(before + 1 + i, image.cloneDeeply());
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public Cursor createCursor(Document changeStream, String namespace, Aggregation aggregation) {
        Object mode = changeStream.get("fullDocument");
        boolean lookup = "updateLookup".equals(mode);
        boolean required = "required".equals(mode);
        boolean postImage = required || "whenAvailable".equals(mode);
        // The fake's own events, without its lookup and without the stream's stages: both are
        // applied below, after each event is copied off the stored oplog entries it was built from.
        Document withoutLookup = new Document(changeStream);
        withoutLookup.remove("fullDocument");
        Cursor plain = super.createCursor(withoutLookup, namespace, NO_STAGES);
        if (!(plain instanceof OplogCursor)) return plain;
        try {
            Function<OplogPosition, Stream<Document>> events = (Function<OplogPosition, Stream<Document>>) CURSOR_STREAM.get(plain);
            OplogPosition start = (OplogPosition) CURSOR_POSITION.get(plain);
            cursors.remove(plain);
            OplogCursor cursor = new OplogCursor(plain.getId(), position -> {
                long from = Long.parseUnsignedLong(position.toHexString(), 16);
                Stream<Document> copies = entries.readingFrom(from, () -> events.apply(position))
                    .map(Document::cloneDeeply).flatMap(event -> dropOfThisCollection(event, namespace))
                    .map(event -> withNamespace(event, namespace));
                if (lookup) copies = copies.map(event -> lookUp(event, namespace));
                if (postImage) copies = copies.map(event -> withPostImage(event, required));
                return aggregation.runStagesAsStream(copies);
            }, start);
            cursors.add(cursor);
            return cursor;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("test server: cannot wrap the change stream's cursor", e);
        }
    }

    /**
     * Patch 14, the event's namespace: real change events carry `ns: {db, coll}` (every event
     * of a collection's stream: insert, update, replace, delete, drop, rename); the fake's carry
     * none. The fake's streams are of one collection, so the namespace of an event of a document
     * (insert, update, delete: those with a `documentKey`) is the stream's. Added
     * before the stream's own stages, so a `$match` on `ns` sees it as on a real server.
     */
    static Document withNamespace(Document event, String namespace) {
        // Only events of a document: a `drop` gets its own from dropOfThisCollection (patch 17),
        // which knows which collection was dropped; an `invalidate` has none.
        if (event.containsKey("ns") || !event.containsKey("documentKey")) return event;
        int dot = namespace.indexOf('.');
        Document ns = new Document("db", namespace.substring(0, dot)).append("coll", namespace.substring(dot + 1));
        // Field order as a real server writes it: after operationType and clusterTime.
        Document ordered = new Document();
        for (var field : event.entrySet()) {
            ordered.put(field.getKey(), field.getValue());
            if (field.getKey().equals("clusterTime")) ordered.put("ns", ns);
        }
        if (!ordered.containsKey("ns")) ordered.put("ns", ns);
        return ordered;
    }

    /**
     * Patch 17, drops (tests/FAKE-SERVER.md row 9): the fake hands every stream of a database a
     * `drop` event for the drop of any of its collections, without `ns`, and never `invalidate`.
     * A real server's stream sees only its own collection's drop, with `ns`, then `invalidate`
     * (which closes it: PatchedBackend closes a cursor whose reply holds one). The dropped
     * collection is read from the event's oplog entry (`o.drop`); the `invalidate` carries the
     * drop's own token (the fake's tokens are timestamps: a stream started after it resumes after
     * the drop, as `startAfter` an invalidate does on a real server).
     */
    private Stream<Document> dropOfThisCollection(Document event, String namespace) {
        if (!"drop".equals(event.get("operationType")) || !(event.get("_id") instanceof Document token)) return Stream.of(event);
        Document entry;
        try {
            entry = entries.entryAt(Long.parseUnsignedLong(String.valueOf(token.get("_data")), 16));
        } catch (NumberFormatException e) {
            return Stream.of(event);
        }
        if (entry == null || !(entry.get("o") instanceof Document command) || !(command.get("drop") instanceof String dropped)) {
            return Stream.of(event);
        }
        int dot = namespace.indexOf('.');
        if (!dropped.equals(namespace.substring(dot + 1))) return Stream.empty();
        Document ns = new Document("db", namespace.substring(0, dot)).append("coll", dropped);
        Document drop = new Document("_id", token).append("operationType", "drop")
            .append("clusterTime", event.get("clusterTime")).append("ns", ns);
        Document invalidate = new Document("_id", token.cloneDeeply()).append("operationType", "invalidate")
            .append("clusterTime", event.get("clusterTime"));
        return Stream.of(drop, invalidate);
    }

    /** An update event with the document as it is now, when it still exists. */
    private Document lookUp(Document event, String namespace) {
        if (!"update".equals(event.get("operationType")) || !(event.get("_id") instanceof Document token)) return event;
        int increment = (int) Long.parseUnsignedLong(String.valueOf(token.get("_data")), 16);
        Object id = updatedIds.get(increment);
        if (id == null) throw new IllegalStateException("test server: no _id recorded for the update entry " + increment);
        Document found = current(namespace, id);
        if (found != null) event.put("fullDocument", found);
        return event;
    }

    /** Patch 24: an update event with the document its update left, if kept; else null, or the real server's error. */
    private Document withPostImage(Document event, boolean required) {
        if (!"update".equals(event.get("operationType")) || !(event.get("_id") instanceof Document token)) return event;
        Document image = postImages.get((int) Long.parseUnsignedLong(String.valueOf(token.get("_data")), 16));
        if (image != null) {
            event.put("fullDocument", image.cloneDeeply());
        } else if (required) {
            // As MongoDB 7.0 and 8.0 raise it (NoMatchingDocument).
            throw new MongoServerError(47, "NoMatchingDocument",
                "Change stream was configured to require a post-image for all update events, "
                    + "but the post-image was not found for event: " + token);
        } else {
            event.put("fullDocument", null);
        }
        return event;
    }

    /** The document of `namespace` whose `_id` is `id`, through the `_id` index, or null. */
    private Document current(String namespace, Object id) {
        int dot = namespace.indexOf('.');
        MongoDatabase database = backend.resolveDatabase(namespace.substring(0, dot));
        MongoCollection<?> collection = database.resolveCollection(namespace.substring(dot + 1), false);
        if (collection == null) return null;
        Iterator<Document> found = collection.handleQuery(new Document("_id", id)).iterator();
        return found.hasNext() ? found.next() : null;
    }
}
