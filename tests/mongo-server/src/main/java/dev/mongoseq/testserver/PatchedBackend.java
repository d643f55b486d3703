package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.oplog.CollectionBackedOplog;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.oplog.OplogPosition;
import io.netty.channel.Channel;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-memory backend with the gaps patched that block what the drivers and our tests need.
 * Every patch here is a recorded deviation from real MongoDB (tests/FAKE-SERVER.md).
 */
final class PatchedBackend extends MemoryBackend {

    /**
     * Patch 1, atomicity: the memory backend runs commands from different connections
     * concurrently without making single-document read-modify-write atomic (8 clients doing
     * findAndModify {$inc} got the same value twice, and a unique index can let two concurrent
     * inserts of one key through). Real MongoDB makes every single-document write atomic. We run
     * commands one at a time; the fake's reads and change-stream getMores return at once, so
     * nothing holds the lock for long. The reply can hold references to the stored documents
     * (findAndModify's `value`), and it is encoded after we return: copy it under the lock, or a
     * later write changes it before it reaches the wire.
     */
    private final ReentrantLock commandLock = new ReentrantLock(true);

    /**
     * Patch 13, a replica set's identity (opt-in: the launcher's `--replica-set NAME`): the
     * drivers' change-stream spec tests run only against a replica set (a real standalone has no
     * oplog). The fake serves change streams either way; with a name, its hello answers as the
     * primary of a one-member set of that name, so the conformance run can evaluate those tests'
     * topology requirement honestly. Nothing else changes: no elections, no secondaries, and
     * `majority` is still trivially every write. Every hello also carries `connectionId`, which a
     * real server always sends (drivers put it on their command events).
     */
    private final String replicaSetName;

    PatchedBackend(String replicaSetName) {
        this.replicaSetName = replicaSetName;
    }

    private void declareIdentity(Channel channel, Document reply) {
        reply.put("connectionId", channel == null ? 0 : Math.abs(channel.id().asShortText().hashCode()));
        if (replicaSetName == null || channel == null || !(channel.localAddress() instanceof java.net.InetSocketAddress local)) return;
        String me = local.getHostString() + ":" + local.getPort();
        reply.put("setName", replicaSetName);
        reply.put("setVersion", 1);
        reply.put("hosts", List.of(me));
        reply.put("primary", me);
        reply.put("me", me);
        reply.put("secondary", Boolean.FALSE);
    }

    /** Patch 7 (see PreImages): collMod's changeStreamPreAndPostImages, deleted documents' pre-images. */
    private final PreImages preImages = new PreImages();

    /** Patch 18 (see AwaitData): runs after every command, outside the lock. */
    private volatile Runnable afterCommand = () -> { };

    void afterEveryCommand(Runnable hook) {
        afterCommand = hook;
    }

    /** How many entries the oplog has logged (its clock's increment); 0 without an oplog clock. */
    int oplogEntries() {
        return oplog instanceof CollectionBackedOplog log && oplogClockReachable() ? oplogNow(log).getInc() : 0;
    }

    /** The cursor is a change stream's (patch 18 holds its empty getMores). */
    boolean isChangeStreamCursor(long id) {
        try {
            return getCursorRegistry().getCursor(id) instanceof OplogCursor;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Patch 3 (see PartialIndex): `db.collection/index` → fields its partial filter requires. */
    private final Map<String, List<String>> partialFilters = new ConcurrentHashMap<>();

    /**
     * Patch 6, postBatchResumeToken: real servers (4.0.7+) put the position a change stream has
     * reached into every aggregate/getMore reply; the fake does not. Drivers then drop their
     * cached resume token after an empty getMore, and when a connection breaks they resume
     * silently from "now": events inserted meanwhile are lost without an error (the chaos test
     * found 78 documents never numbered after a cut connection). We add the token of the
     * change-stream cursor's position (the fake's own `OplogCursor.position`, read reflectively).
     */
    private static final Field OPLOG_POSITION = accessibleField(OplogCursor.class, "position");

    /**
     * Patch 8, the scan's high-water mark (tests/FAKE-SERVER.md row 21): a real server's
     * change-stream cursor moves past the oplog entries its `$match` drops, and its
     * postBatchResumeToken says so. The fake's cursor moves only to the last event it returned,
     * so every getMore scans (and looks up, with `updateLookup`) the dropped entries behind it
     * again, and its token stays there. When a reply is not full the scan reached the oplog's end
     * (commands run one at a time): the cursor is moved to the oplog clock's current time.
     */
    private static final Field OPLOG_CLOCK = accessibleField(CollectionBackedOplog.class, "oplogClock");
    private static final Method OPLOG_CLOCK_NOW = accessibleMethod("de.bwaldvogel.mongo.oplog.OplogClock", "now");

    static Field accessibleField(Class<?> owner, String name) {
        try {
            Field field = owner.getDeclaredField(name);
            field.setAccessible(true);
            return field;
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("test server: cannot reach " + owner.getSimpleName() + "." + name + ": " + e);
            return null;
        }
    }

    private static Method accessibleMethod(String owner, String name) {
        try {
            Method method = Class.forName(owner).getDeclaredMethod(name);
            method.setAccessible(true);
            return method;
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("test server: cannot reach " + owner + "." + name + ": " + e);
            return null;
        }
    }

    private void addPostBatchResumeToken(String command, Document query, Document reply) {
        if (OPLOG_POSITION == null || !(command.equals("aggregate") || command.equals("getMore"))) return;
        if (!(reply.get("cursor") instanceof Document cursor) || !(cursor.get("id") instanceof Number id) || id.longValue() == 0) return;
        try {
            Cursor open = getCursorRegistry().getCursor(id.longValue());
            if (!(open instanceof OplogCursor)) return;
            if (scannedToTheEnd(command, query, cursor) && oplog instanceof CollectionBackedOplog log) {
                OPLOG_POSITION.set(open, new OplogPosition(oplogNow(log)));
            }
            if (OPLOG_POSITION.get(open) instanceof OplogPosition position) {
                cursor.put("postBatchResumeToken", new Document("_data", position.toHexString()));
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // no token: the driver keeps the one it has
        }
    }

    /** Patch 17 (see IndexedOplog): a change stream's reply that holds `invalidate` closes its cursor. */
    private void closeInvalidated(String command, Document reply) {
        if (!(command.equals("aggregate") || command.equals("getMore"))) return;
        if (!(reply.get("cursor") instanceof Document cursor) || !(cursor.get("id") instanceof Number id) || id.longValue() == 0) return;
        Object batch = cursor.get(command.equals("aggregate") ? "firstBatch" : "nextBatch");
        if (!(batch instanceof List<?> events)) return;
        boolean invalidated = events.stream().anyMatch(e -> e instanceof Document d && "invalidate".equals(d.get("operationType")));
        if (!invalidated) return;
        try {
            getCursorRegistry().remove(id.longValue());
        } catch (RuntimeException e) {
            // already gone
        }
        cursor.put("id", 0L);
    }

    /** The reply holds fewer events than asked for (or no limit was asked): nothing was left. */
    private static boolean scannedToTheEnd(String command, Document query, Document cursor) {
        Object asked = command.equals("aggregate")
            ? (query.get("cursor") instanceof Document options ? options.get("batchSize") : null)
            : query.get("batchSize");
        Object batch = cursor.get(command.equals("aggregate") ? "firstBatch" : "nextBatch");
        if (!(batch instanceof List<?> events)) return false;
        return !(asked instanceof Number limit) || limit.intValue() <= 0 || events.size() < limit.intValue();
    }

    /** The oplog clock can be read (see oplogNow). */
    static boolean oplogClockReachable() {
        return OPLOG_CLOCK != null && OPLOG_CLOCK_NOW != null;
    }

    /** The oplog clock's current time: at or after every entry so far, before every later one. */
    static BsonTimestamp oplogNow(CollectionBackedOplog oplog) {
        if (OPLOG_CLOCK == null || OPLOG_CLOCK_NOW == null) throw new IllegalStateException("test server: no oplog clock");
        try {
            return (BsonTimestamp) OPLOG_CLOCK_NOW.invoke(OPLOG_CLOCK.get(oplog));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("test server: cannot read the oplog clock", e);
        }
    }

    /** Patches 9 and 10 (see IndexedOplog): change streams read from their position, lookups by `_id`. */
    @Override
    protected Oplog createOplog() {
        if (!IndexedOplog.available()) return super.createOplog();
        MongoDatabase local = resolveDatabase("local");
        Object collection = local.resolveCollection(OPLOG_COLLECTION_NAME, false);
        if (collection == null) collection = local.createCollectionOrThrowIfExists(OPLOG_COLLECTION_NAME);
        if (!(collection instanceof OplogEntries entries)) return super.createOplog();
        // Read lazily: the super constructor creates the oplog before this class's fields are set.
        return new IndexedOplog(this, entries, getCursorRegistry(), ns -> preImages != null && preImages.keepsImages(ns));
    }

    /** The oplog collection's name in `local` (patch 10: OplogEntries). */
    static final String OPLOG_COLLECTION = OPLOG_COLLECTION_NAME;

    static String indexId(String database, String collection, String index) {
        return database + "." + collection + "/" + index;
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new PatchedDatabase(databaseName, getCursorRegistry(), partialFilters);
    }

    /** Records the partial filters of a createIndexes command before the fake builds the indexes. */
    private void recordPartialFilters(String database, Document query) {
        Object collection = query.get("createIndexes");
        Object indexes = query.get("indexes");
        if (!(indexes instanceof List<?> list)) return;
        for (Object item : list) {
            if (!(item instanceof Document index) || !(index.get("partialFilterExpression") instanceof Document filter)) continue;
            List<String> required = new ArrayList<>();
            for (Map.Entry<String, Object> entry : filter.entrySet()) {
                if (entry.getValue() instanceof Document condition && condition.size() == 1
                        && Boolean.TRUE.equals(condition.get("$exists"))) {
                    required.add(entry.getKey());
                } else {
                    throw new MongoServerError(67, "CannotCreateIndex",
                        "test server: only {field: {$exists: true}} partial filters are supported, got " + filter);
                }
            }
            partialFilters.put(indexId(database, String.valueOf(collection), String.valueOf(index.get("name"))), required);
        }
    }

    /**
     * Patch 12, the `n` of an insert with write errors: the fake answers `n` = every document of
     * the command, refused ones included (an ordered insert of three whose second is a duplicate
     * said `n: 3` for one document in). A real server counts the documents inserted: before the
     * first error when ordered, all but the refused when not.
     */
    private static void countInsertedOnly(Document query, Document reply) {
        if (!(reply.get("writeErrors") instanceof List<?> errors) || errors.isEmpty()) return;
        if (!(query.get("documents") instanceof List<?> documents)) return;
        boolean ordered = !Boolean.FALSE.equals(query.get("ordered"));
        int inserted = documents.size() - errors.size();
        if (ordered && errors.get(0) instanceof Document first && first.get("index") instanceof Number index) {
            inserted = index.intValue();
        }
        reply.put("n", inserted);
    }

    /**
     * Patch 16, a refused delete statement is a write error: the fake fails the whole `delete`
     * command (`ok: 0`) when a statement's filter is refused (an unknown operator); a real server
     * answers `ok: 1` with that statement in `writeErrors` (its index, code, message) and `n` the
     * documents the other statements deleted, stopping at it when ordered. Here each statement
     * runs as a command of its own and the replies are put together that way.
     */
    private Document deleteStatementByStatement(Channel channel, String database, Document query) {
        if (!(query.get("deletes") instanceof List<?> deletes) || deletes.size() == 0) {
            return super.handleCommand(channel, database, "delete", query).cloneDeeply();
        }
        boolean ordered = !Boolean.FALSE.equals(query.get("ordered"));
        int deleted = 0;
        List<Document> writeErrors = new ArrayList<>();
        for (int index = 0; index < deletes.size(); index++) {
            Document one = new Document(query);
            one.put("deletes", List.of(deletes.get(index)));
            try {
                Document reply = super.handleCommand(channel, database, "delete", one);
                if (reply.get("n") instanceof Number n) deleted += n.intValue();
            } catch (MongoServerError e) {
                writeErrors.add(new Document("index", index).append("code", e.getCode())
                    .append("codeName", e.getCodeName()).append("errmsg", e.getMessageWithoutErrorCode()));
                if (ordered) break;
            }
        }
        Document reply = new Document("n", deleted);
        if (!writeErrors.isEmpty()) reply.put("writeErrors", writeErrors);
        reply.put("ok", 1.0);
        return reply;
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
        // Patch 2, `hello`: the fake only knows the legacy isMaster. Drivers fall back to it,
        // but users and tools call hello; answer it the way a standalone 4.4 server does.
        boolean hello = command.equals("hello");
        commandLock.lock();
        try {
            if (command.equals("createIndexes")) {
                recordPartialFilters(database, query);
            }
            if (command.equals("collMod")) {
                Document answer = preImages.collMod(database, query);
                if (answer != null) return answer;
            }
            if (command.equals("delete")) {
                preImages.beforeDelete(database, query, find -> super.handleCommand(channel, database, "find", find).cloneDeeply());
            }
            Document reply;
            try {
                reply = command.equals("delete")
                    ? deleteStatementByStatement(channel, database, query)
                    : super.handleCommand(channel, database, hello ? "isMaster" : command, query).cloneDeeply();
            } catch (NumberFormatException e) {
                // Patch 4, lost history: the fake's oplog is unbounded, so a real server's
                // ChangeStreamHistoryLost never happens; a resume token it cannot read ends in a
                // reply without an error code. Answer such a token the way a real server answers
                // one that is no longer in its oplog.
                if (command.equals("aggregate") && query.toString().contains("$changeStream")) {
                    throw new MongoServerError(286, "ChangeStreamHistoryLost",
                        "test server: resume token not found in the oplog (" + e.getMessage() + ")");
                }
                throw e;
            } catch (MongoServerException e) {
                // Patch 15, NamespaceNotFound: the fake answers a command on a collection that
                // does not exist (drop, dropIndexes, …) with "ns not found" and no code; a real
                // server sends code 26 (NamespaceNotFound), by which drivers and callers tell it
                // apart (the Node driver's dropCollection ignores it, the npm package's
                // dropIndex takes it for "already gone").
                if (!(e instanceof MongoServerError) && "ns not found".equals(e.getMessageWithoutErrorCode())) {
                    throw new MongoServerError(26, "NamespaceNotFound", "ns not found");
                }
                throw e;
            }
            addPostBatchResumeToken(command, query, reply);
            closeInvalidated(command, reply);
            if (command.equals("insert")) countInsertedOnly(query, reply);
            preImages.afterStreamReply(database, command, query, reply);
            if (hello) {
                reply.put("isWritablePrimary", Boolean.TRUE);
                reply.remove("ismaster");
            }
            if (hello || command.equalsIgnoreCase("isMaster")) declareIdentity(channel, reply);
            return reply;
        } finally {
            commandLock.unlock();
            afterCommand.run();
        }
    }
}
