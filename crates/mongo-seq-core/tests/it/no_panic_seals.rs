//! Sealed series on hostile input: a link of any fields, links of any JSON, chains of any
//! shape (forks, cycles, self-links) are sealed or verified without a panic.

use mongo_seq_core::seal::link::{Link, LinkKind, Seal};
use mongo_seq_core::seal::verify::{verify_series, StoredLink};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use crate::common;
use common::{edge_int, json_value, key, number, text};

proptest! {
    #[test]
    fn seals_never_panic_and_are_sha256_hex(
        fields in prop::collection::vec((key(), prop_oneof![number(), json_value()]), 0..6),
        number in edge_int(),
        previous in prop::option::of(text()),
        raw in prop::collection::vec(json_value(), 0..6),
    ) {
        let fields: Map<String, Value> = fields.into_iter().collect();
        let link = json!({"series": "s", "kind": "issue", "number": number, "fields": fields});
        let link = Link::from_json("link", &link).expect("a well-formed link reads");
        if let Ok(sealed) = link.sealed(previous.as_deref()) {
            prop_assert!(sealed.seal.hash.len() == 64 && sealed.seal.hash.bytes().all(|b| b.is_ascii_hexdigit()));
        }
        let _ = StoredLink::list_from_json("links", &Value::Array(raw));
    }

    #[test]
    fn chains_of_any_shape_are_verified_without_panic(
        links in prop::collection::vec((edge_int(), any::<bool>(), prop::option::of("[abc]"), "[abc]"), 0..8),
        anchor in prop::option::of("[abc]"),
        head in prop::option::of("[abc]"),
    ) {
        // Hashes from a small alphabet make forks, cycles and self-links likely.
        let stored: Vec<StoredLink> = links
            .into_iter()
            .map(|(number, void, previous, hash)| StoredLink {
                link: Link {
                    series: "s".to_owned(),
                    kind: if void { LinkKind::Void } else { LinkKind::Issue },
                    number,
                    period: None,
                    fields: Map::new(),
                },
                seal: Some(Seal { hash, previous }),
            })
            .collect();
        let report = verify_series("s", &stored, anchor.as_deref(), head.as_deref());
        prop_assert!(report.links <= stored.len() as u64);
        prop_assert_eq!(report.verified, report.failures.is_empty());
    }
}
