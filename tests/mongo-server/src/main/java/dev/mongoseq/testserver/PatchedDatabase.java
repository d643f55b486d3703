package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;

import java.util.List;
import java.util.Map;

/**
 * A memory database whose unique indexes honour `{field: {$exists: true}}` partial filters, whose
 * `_id` index serves queries that pin `_id` (and whose collections match `_id: {$in}` through a
 * set: IdInMatching), and whose oplog collection keeps its timestamps in order (OplogEntries).
 */
final class PatchedDatabase extends MemoryDatabase {
    private final String name;
    private final Map<String, List<String>> partialFilters;

    PatchedDatabase(String name, CursorRegistry cursorRegistry, Map<String, List<String>> partialFilters) {
        super(name, cursorRegistry);
        this.name = name;
        this.partialFilters = partialFilters;
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        // Called from the super constructor: `name` is not set yet.
        if ("local".equals(getDatabaseName()) && collectionName.equals(PatchedBackend.OPLOG_COLLECTION)) {
            return new OplogEntries(this, collectionName, options, cursorRegistry);
        }
        return new IdInMatching(this, collectionName, options, cursorRegistry);
    }

    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
        Index<Integer> index = super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
        if (indexName.equals("_id_")) {
            return new IdIndex(index);
        }
        List<String> required = partialFilters.get(PatchedBackend.indexId(name, collectionName, indexName));
        return required == null ? index : new PartialIndex(index, required);
    }
}
