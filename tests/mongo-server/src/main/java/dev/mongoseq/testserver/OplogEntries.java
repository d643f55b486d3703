package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.OplogDocumentFields;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * The oplog collection (`local.oplog.rs`) with its entries' timestamps kept in order, so that a
 * change stream's read can start at its position (patch 10, see IndexedOplog): the fake's own
 * read takes the whole collection, through a query that copies every entry, at every aggregate
 * and getMore. Entries are only ever appended, with increasing timestamps; if that ever fails
 * (an entry removed, a clock that went back) reads take the whole collection again.
 */
final class OplogEntries extends MemoryCollection {
    /** The timestamp of the entry at each position. */
    private final List<Long> timestamps = new ArrayList<>();
    private boolean inOrder = true;
    /** Set while a change stream reads: the timestamp its entries start at. */
    private Long readFrom;

    OplogEntries(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
        super(database, name, options, cursors);
    }

    @Override
    protected Integer addDocumentInternal(Document document) {
        Integer position = super.addDocumentInternal(document);
        long timestamp = document.get(OplogDocumentFields.TIMESTAMP) instanceof BsonTimestamp ts ? ts.getValue() : Long.MIN_VALUE;
        boolean appended = position == timestamps.size();
        if (!appended || (!timestamps.isEmpty() && Long.compareUnsigned(timestamp, timestamps.get(timestamps.size() - 1)) < 0)) {
            inOrder = false;
        } else {
            timestamps.add(timestamp);
        }
        return position;
    }

    @Override
    protected void removeDocument(Integer position) {
        inOrder = false;
        super.removeDocument(position);
    }

    /** Runs `read` with {@link #queryAllAsStream} starting at the first entry at or after `from`. */
    <T> T readingFrom(long from, Supplier<T> read) {
        readFrom = from;
        try {
            return read.get();
        } finally {
            readFrom = null;
        }
    }

    @Override
    public Stream<Document> queryAllAsStream() {
        Long from = readFrom;
        if (from == null || !inOrder) return super.queryAllAsStream();
        // The stored entries themselves, not copies: the fake only reads them to build events,
        // and IndexedOplog copies each event before the stream's stages see it.
        return IntStream.range(firstAtOrAfter(from), timestamps.size()).mapToObj(this::getDocument);
    }

    /** The entry logged at `timestamp`, or null (none, or the order was lost). */
    Document entryAt(long timestamp) {
        if (!inOrder) return null;
        int position = firstAtOrAfter(timestamp);
        if (position >= timestamps.size() || timestamps.get(position) != timestamp) return null;
        return getDocument(position);
    }

    /** Binary search, comparing as BsonTimestamp does (unsigned). */
    private int firstAtOrAfter(long timestamp) {
        int low = 0;
        int high = timestamps.size();
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (Long.compareUnsigned(timestamps.get(middle), timestamp) < 0) low = middle + 1;
            else high = middle;
        }
        return low;
    }
}
