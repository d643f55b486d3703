//! A read causally after a change event (`find` with `afterClusterTime`): the driver's `find`
//! takes a read concern level only, so the command goes as the core built it, its `readConcern`
//! with `afterClusterTime` and its `maxTimeMS`, on the client's read preference (the driver
//! iterates the cursor).

use futures_util::TryStreamExt;
use mongo_seq_core::{QueryOptions, ReadConcern, Reply};
use mongodb::bson::doc;
use serde_json::Value;

use super::{document, many, Failed, Optional, Place};

pub(super) async fn find(
    place: &Place,
    filter: Value,
    options: QueryOptions,
    concern: Option<ReadConcern>,
    max_time: Option<u64>,
) -> Result<Reply, Failed> {
    let mut find = doc! { "find": place.collection.name(), "filter": document(filter)? };
    if let Some(projection) = options.projection {
        find.insert("projection", document(projection)?);
    }
    if let Some(sort) = options.sort {
        find.insert("sort", document(sort)?);
    }
    if let Some(limit) = options.limit {
        find.insert("limit", i64::try_from(limit).unwrap_or(i64::MAX));
    }
    if let Some(concern) = concern {
        find.insert("readConcern", document(concern.to_json())?);
    }
    if let Some(ms) = max_time {
        find.insert("maxTimeMS", i64::try_from(ms).unwrap_or(i64::MAX));
    }
    let cursor = place
        .db
        .run_cursor_command(find)
        .optional(place.db.selection_criteria().cloned(), |action, s| {
            action.selection_criteria(s)
        })
        .await?;
    Ok(many(cursor.try_collect().await?))
}
