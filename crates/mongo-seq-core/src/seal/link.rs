//! One link of a sealed series and its seal: a number issued to a document, or a number that
//! left the series (voided, its document's deletion recorded), hashed with the link before it.

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::ejson::{describe, quoted, read_i64};
use crate::error::SeqError;
use crate::seal::canonical::{compact_json, sorted_canonical};
use crate::sequence::field::stored_value;

/// The version of the encoding, hashed into every link (a later encoding is a new version).
pub const ENCODING_VERSION: i64 = 1;

/// What a link records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LinkKind {
    /// A number issued to a document (sealed once final).
    Issue,
    /// A voided number (a ledger entry).
    Void,
    /// A recorded deletion of a sealed document (a ledger entry).
    Deletion,
}

impl LinkKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Issue => "issue",
            Self::Void => "void",
            Self::Deletion => "deletion",
        }
    }
}

fn describe_option(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_owned(), describe)
}

/// A link's seal as stored beside its number (`<field>Seal`) or in its ledger entry: its hash
/// and the hash of the link before it (none for the first link of the first period).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seal {
    pub hash: String,
    pub previous: Option<String>,
}

impl Seal {
    /// A seal given as JSON (`{hash, previous}`), or why it is not one.
    pub fn read(value: &Value) -> Result<Self, String> {
        const SHAPE: &str = "must be a seal {hash, previous}";
        let Value::Object(map) = value else {
            return Err(format!("{SHAPE}, got {}", describe(value)));
        };
        let hash = match map.get("hash") {
            Some(Value::String(hash)) => hash.clone(),
            other => {
                return Err(format!(
                    "{SHAPE}: `hash` must be a string, got {}",
                    describe_option(other)
                ))
            }
        };
        let previous = match map.get("previous") {
            None | Some(Value::Null) => None,
            Some(Value::String(previous)) => Some(previous.clone()),
            Some(other) => {
                return Err(format!(
                    "{SHAPE}: `previous` must be a string or null, got {}",
                    describe(other)
                ))
            }
        };
        if map.len() > usize::from(map.contains_key("previous")).saturating_add(1) {
            return Err(format!("{SHAPE}: unknown keys"));
        }
        Ok(Self { hash, previous })
    }
}

/// A link, as sealed or as read back to verify. As JSON (a shell's argument):
/// `{series, kind, number, period?, fields}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Link {
    /// The series: its counter id (sequence, scope values, period).
    pub series: String,
    pub kind: LinkKind,
    pub number: i64,
    /// The period of a series that resets.
    pub period: Option<String>,
    /// The sealed fields' values by field path (a field the document lacks is left out, so
    /// adding it later breaks the seal as changing it does).
    pub fields: Map<String, Value>,
}

impl Link {
    /// A link given as JSON by a shell; a malformed one is `INVALID_ARGUMENT` naming `argument`.
    pub fn from_json(argument: &str, value: &Value) -> Result<Self, SeqError> {
        Self::read(value).map_err(|reason| SeqError::InvalidArgument {
            argument: argument.to_owned(),
            reason,
        })
    }

    /// A link given as JSON, or why it is not one. Read by hand, not by serde's derive: the
    /// derive's visitors would weigh several times this on the Wasm module.
    pub(crate) fn read(value: &Value) -> Result<Self, String> {
        const SHAPE: &str = "must be a link {series, kind, number, period?, fields}";
        let Value::Object(map) = value else {
            return Err(format!("{SHAPE}, got {}", describe(value)));
        };
        if let Some(unknown) = map
            .keys()
            .find(|key| !["series", "kind", "number", "period", "fields"].contains(&key.as_str()))
        {
            return Err(format!("{SHAPE}: unknown key {}", quoted(unknown)));
        }
        let text = |key: &str| match map.get(key) {
            Some(Value::String(text)) => Ok(text.clone()),
            other => Err(format!(
                "{SHAPE}: `{key}` must be a string, got {}",
                describe_option(other)
            )),
        };
        let kind = match text("kind")?.as_str() {
            "issue" => LinkKind::Issue,
            "void" => LinkKind::Void,
            "deletion" => LinkKind::Deletion,
            other => {
                return Err(format!(
                    "{SHAPE}: `kind` must be issue, void or deletion, got {}",
                    quoted(other)
                ))
            }
        };
        let number = read_i64(map.get("number").unwrap_or(&Value::Null))
            .map_err(|reason| format!("{SHAPE}: `number` {reason}"))?;
        let period = match map.get("period") {
            None | Some(Value::Null) => None,
            Some(_) => Some(text("period")?),
        };
        let Some(Value::Object(fields)) = map.get("fields") else {
            return Err(format!(
                "{SHAPE}: `fields` must be a document, got {}",
                describe_option(map.get("fields"))
            ));
        };
        Ok(Self {
            series: text("series")?,
            kind,
            number,
            period,
            fields: fields.clone(),
        })
    }

    /// An issue link of `document`, sealing the values of `seal_fields` (field paths).
    pub fn issued(
        series: &str,
        number: i64,
        period: Option<&str>,
        document: &Value,
        seal_fields: &[String],
    ) -> Self {
        let mut fields = Map::new();
        for path in seal_fields {
            if let Some(value) = stored_value(document, path) {
                fields.insert(path.clone(), value.clone());
            }
        }
        Self {
            series: series.to_owned(),
            kind: LinkKind::Issue,
            number,
            period: period.map(str::to_owned),
            fields,
        }
    }

    /// The bytes hashed (as UTF-8) for this link after `previous`: see the module docs of
    /// [`crate::seal`]. A field value that cannot be sealed (`$unrepresentable`, a malformed
    /// Extended JSON wrapper) is `INVALID_ARGUMENT` naming the field.
    pub fn encoding(&self, previous: Option<&str>) -> Result<String, SeqError> {
        let fields =
            sorted_canonical(&self.fields).map_err(|(name, reason)| SeqError::InvalidArgument {
                argument: name,
                reason: format!("cannot be sealed: {reason}"),
            })?;
        // Keys in sorted order (the map keeps insertion order).
        let mut link = Map::new();
        link.insert("fields".to_owned(), Value::Object(fields));
        link.insert("kind".to_owned(), self.kind.name().into());
        link.insert("number".to_owned(), self.number.to_string().into());
        link.insert("period".to_owned(), self.period.clone().into());
        link.insert("previous".to_owned(), previous.map(str::to_owned).into());
        link.insert("series".to_owned(), self.series.clone().into());
        link.insert("v".to_owned(), ENCODING_VERSION.into());
        Ok(compact_json(&Value::Object(link)))
    }

    /// This link's seal after the link whose hash is `previous`.
    pub fn seal(&self, previous: Option<&str>) -> Result<Seal, SeqError> {
        self.sealed(previous).map(|sealed| sealed.seal)
    }

    /// This link's seal after `previous`, with the encoding it hashed (what a shell shows
    /// someone re-computing it).
    pub fn sealed(&self, previous: Option<&str>) -> Result<SealedLink, SeqError> {
        let encoding = self.encoding(previous)?;
        Ok(SealedLink {
            seal: Seal {
                hash: sha256_hex(&encoding),
                previous: previous.map(str::to_owned),
            },
            encoding,
        })
    }
}

/// A link's seal and the encoding hashed for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SealedLink {
    pub encoding: String,
    #[serde(flatten)]
    pub seal: Seal,
}

/// SHA-256 of `text`'s UTF-8 bytes, lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    // Two digits per byte without a `format!` each (a counter definition's digest is one).
    let digit = |nibble: u8| char::from_digit(u32::from(nibble), 16).unwrap_or('0');
    for byte in digest {
        hex.push(digit(byte >> 4));
        hex.push(digit(byte & 0x0f));
    }
    hex
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn invoice() -> Link {
        Link::issued(
            "invoices/2026",
            1,
            Some("2026"),
            &json!({"_id": 7, "total": {"$numberDecimal": "120.00"}, "customer": {"name": "Ana"}, "seq": 1}),
            &[
                "total".to_owned(),
                "customer.name".to_owned(),
                "note".to_owned(),
            ],
        )
    }

    #[test]
    fn the_encoding_is_sorted_compact_and_leaves_absent_fields_out() {
        assert_eq!(
            invoice().encoding(None).unwrap(),
            r#"{"fields":{"customer.name":"Ana","total":{"decimal":"120.00"}},"kind":"issue","number":"1","period":"2026","previous":null,"series":"invoices/2026","v":1}"#
        );
    }

    #[test]
    fn a_seal_is_the_sha256_of_the_encoding_after_the_previous_hash() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let first = invoice().seal(None).unwrap();
        assert_eq!(first.hash, sha256_hex(&invoice().encoding(None).unwrap()));
        let second = invoice().seal(Some(&first.hash)).unwrap();
        assert_ne!(first.hash, second.hash);
        assert_eq!(second.previous.as_deref(), Some(first.hash.as_str()));
    }

    #[test]
    fn a_value_that_cannot_be_sealed_names_its_field() {
        let mut link = invoice();
        link.fields
            .insert("total".to_owned(), crate::ejson::unrepresentable("NaN"));
        let error = link.seal(None).unwrap_err();
        assert_eq!(error.code(), "INVALID_ARGUMENT");
        assert!(error.to_string().contains("total"), "{error}");
    }
}
