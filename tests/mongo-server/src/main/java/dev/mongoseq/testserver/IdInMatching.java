package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * Patch 11, speed only (tests/FAKE-SERVER.md row 12): the fake matches `_id: {$in: [...]}` by
 * comparing a document's `_id` with the list's values one after another, for each candidate the
 * `_id` index gave: a find of 1,000 ids took ~50 ms, where a scan of the whole collection for the
 * same documents took 10–15 ms. Real MongoDB looks each value up. Here that condition is answered
 * from a set of the list's values (normalized as the fake's own indexes compare keys), and the
 * rest of the query is matched by the fake as before. Lists or `_id`s holding anything but
 * strings, ObjectIds and numbers are matched by the fake alone.
 */
final class IdInMatching extends MemoryCollection {
    /** The last query seen with such a condition (commands run one at a time), and its parts. */
    private Document lastQuery;
    private Set<KeyValue> lastIds;
    private Document lastRest;

    IdInMatching(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
        super(database, name, options, cursors);
    }

    @Override
    protected boolean documentMatchesQuery(Document document, Document query) {
        if (query != lastQuery) prepare(query);
        if (lastIds == null || !plain(document.get("_id"))) return super.documentMatchesQuery(document, query);
        return lastIds.contains(new KeyValue(document.get("_id")).normalized())
            && super.documentMatchesQuery(document, lastRest);
    }

    private void prepare(Document query) {
        lastQuery = query;
        lastIds = null;
        if (!(query.get("_id") instanceof Document condition) || condition.size() != 1
            || !(condition.get("$in") instanceof Collection<?> values)) return;
        Set<KeyValue> ids = new HashSet<>();
        for (Object value : values) {
            if (!plain(value)) return;
            ids.add(new KeyValue(value).normalized());
        }
        Document rest = new Document(query);
        rest.remove("_id");
        lastIds = ids;
        lastRest = rest;
    }

    private static boolean plain(Object value) {
        return value instanceof String || value instanceof ObjectId
            || value instanceof Integer || value instanceof Long || value instanceof Double;
    }
}
