//! mongo-seq core (placeholder)
