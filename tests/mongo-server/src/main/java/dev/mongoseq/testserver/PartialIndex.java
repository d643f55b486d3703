package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.KeyConstraintError;

import java.util.List;

/**
 * Patch 3, partial indexes: the fake accepts `partialFilterExpression` but ignores it, so a
 * unique index "only where the field exists" refuses the second document without the field.
 * This wrapper gives a unique index the meaning of a partial filter made of
 * `{field: {$exists: true}}` conditions (the only form the project uses): documents that lack
 * one of the fields are not in the index. Other partial filters are rejected when the index is
 * created (see PatchedBackend), rather than silently ignored.
 */
final class PartialIndex extends Index<Integer> {
    private final Index<Integer> delegate;
    private final List<String> requiredFields;

    PartialIndex(Index<Integer> delegate, List<String> requiredFields) {
        super(delegate.getName(), delegate.getKeys(), false);
        this.delegate = delegate;
        this.requiredFields = List.copyOf(requiredFields);
    }

    private boolean covers(Document document) {
        for (String field : requiredFields) {
            if (Utils.getSubdocumentValue(document, field) instanceof Missing) {
                return false;
            }
        }
        return true;
    }

    @Override public boolean isUnique() { return delegate.isUnique(); }
    /**
     * Deleting a document the index leaves out must not fail: the fake accepts a null position
     * from `remove` only for sparse indexes, and otherwise throws after the `_id` index already
     * dropped the document (leaving it half deleted). Only that removal path asks.
     */
    @Override public boolean isSparse() { return true; }
    @Override public Integer getPosition(Document document) { return covers(document) ? delegate.getPosition(document) : null; }
    @Override public void checkAdd(Document document, MongoCollection<Integer> collection) { if (covers(document)) delegate.checkAdd(document, collection); }
    @Override public void add(Document document, Integer position, MongoCollection<Integer> collection) { if (covers(document)) delegate.add(document, position, collection); }
    @Override public Integer remove(Document document) { return covers(document) ? delegate.remove(document) : null; }
    @Override public boolean canHandle(Document query) { return false; }
    @Override public Iterable<Integer> getPositions(Document query) { return delegate.getPositions(query); }
    @Override public long getCount() { return delegate.getCount(); }
    @Override public long getDataSize() { return delegate.getDataSize(); }
    @Override public void drop() { delegate.drop(); }

    @Override
    public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        if (!covers(newDocument)) return;
        if (covers(oldDocument)) delegate.checkUpdate(oldDocument, newDocument, collection);
        else delegate.checkAdd(newDocument, collection);
    }

    @Override
    public void updateInPlace(Document oldDocument, Document newDocument, Integer position, MongoCollection<Integer> collection) throws KeyConstraintError {
        boolean was = covers(oldDocument);
        boolean is = covers(newDocument);
        if (was && is) {
            delegate.updateInPlace(oldDocument, newDocument, position, collection);
        } else if (was) {
            delegate.remove(oldDocument);
        } else if (is) {
            delegate.checkAdd(newDocument, collection);
            delegate.add(newDocument, position, collection);
        }
    }
}
