package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.bson.Document;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Patch 7, pre-images (tests/FAKE-SERVER.md): real MongoDB 6.0+ keeps the document a delete
 * removed when the collection has `changeStreamPreAndPostImages: {enabled: true}` (collMod),
 * and a change stream opened with `fullDocumentBeforeChange: "whenAvailable"`/`"required"`
 * hands it out in the delete event. The fake knows neither collMod nor pre-images. We record
 * the option per collection, keep the documents a `delete` command removes from such a
 * collection (the latest per `_id`: a document deleted, inserted again and deleted again shows
 * its last version), and add them to the delete events of streams that asked for them.
 * Called under PatchedBackend's command lock.
 */
final class PreImages {
    private final Set<String> enabled = ConcurrentHashMap.newKeySet();
    private final Map<String, Document> images = new ConcurrentHashMap<>();
    /** Change-stream cursors opened with fullDocumentBeforeChange, and their namespace. */
    private final Map<Long, String> cursors = new ConcurrentHashMap<>();

    /** `collMod {changeStreamPreAndPostImages: {enabled}}`: the reply, or null for another collMod. */
    Document collMod(String database, Document query) {
        if (!(query.get("changeStreamPreAndPostImages") instanceof Document option)) return null;
        String ns = database + "." + query.get("collMod");
        if (Boolean.TRUE.equals(option.get("enabled"))) enabled.add(ns);
        else enabled.remove(ns);
        return new Document("ok", 1.0);
    }

    /** Whether `ns` keeps images (collMod changeStreamPreAndPostImages): post-images too (IndexedOplog, patch 24). */
    boolean keepsImages(String ns) {
        return enabled.contains(ns);
    }

    /** Before a `delete` command: keeps the documents it is about to remove (`find` runs the query). */
    void beforeDelete(String database, Document query, Function<Document, Document> find) {
        String collection = String.valueOf(query.get("delete"));
        String ns = database + "." + collection;
        if (!enabled.contains(ns) || !(query.get("deletes") instanceof List<?> deletes)) return;
        for (Object item : deletes) {
            if (!(item instanceof Document statement)) continue;
            Object filter = statement.getOrDefault("q", new Document());
            boolean one = statement.get("limit") instanceof Number limit && limit.intValue() == 1;
            Document reply = find.apply(new Document("find", collection).append("filter", filter)
                .append("limit", one ? 1 : 0).append("batchSize", Integer.MAX_VALUE).append("singleBatch", true));
            if (!(reply.get("cursor") instanceof Document cursor) || !(cursor.get("firstBatch") instanceof List<?> found)) continue;
            for (Object document : found) {
                if (document instanceof Document doc) images.put(ns + "/" + doc.get("_id"), doc.cloneDeeply());
            }
        }
    }

    /** After an aggregate or getMore: adds pre-images to the delete events of streams that asked. */
    void afterStreamReply(String database, String command, Document query, Document reply) {
        if (!(reply.get("cursor") instanceof Document cursor)) return;
        String ns;
        if (command.equals("aggregate")) {
            if (!asksForPreImages(query)) return;
            ns = database + "." + query.get("aggregate");
            if (cursor.get("id") instanceof Number id && id.longValue() != 0) cursors.put(id.longValue(), ns);
        } else if (command.equals("getMore") && query.get("getMore") instanceof Number id) {
            ns = cursors.get(id.longValue());
            if (ns == null) return;
        } else {
            return;
        }
        for (String batch : List.of("firstBatch", "nextBatch")) {
            if (!(cursor.get(batch) instanceof List<?> events)) continue;
            for (Object item : events) {
                if (!(item instanceof Document event) || !"delete".equals(event.get("operationType"))) continue;
                if (!(event.get("documentKey") instanceof Document key)) continue;
                Document image = images.get(ns + "/" + key.get("_id"));
                if (image != null) event.put("fullDocumentBeforeChange", image.cloneDeeply());
            }
        }
    }

    private static boolean asksForPreImages(Document query) {
        if (!(query.get("pipeline") instanceof List<?> pipeline) || pipeline.isEmpty()) return false;
        if (!(pipeline.get(0) instanceof Document first) || !(first.get("$changeStream") instanceof Document stage)) return false;
        Object mode = stage.get("fullDocumentBeforeChange");
        return "whenAvailable".equals(mode) || "required".equals(mode);
    }
}
