//! Sealed series: every link of a series chained to the one before it by a SHA-256 hash, so a
//! sealed field changed, a sealed document deleted without a record, a number inserted or a
//! link out of order is found by re-computing the chain ([`verify`]).
//!
//! A **link** ([`link::Link`]) is a number issued to a document, or a number that left the
//! series (a void, a recorded deletion), with the values of the fields the user seals. Its
//! **seal** ([`link::Seal`]) is `{hash, previous}`: `previous` is the hash of the link before it
//! in the series (for a series' first link, the last hash of the series' period before; none
//! for the first period sealed), and `hash` is the lowercase hex SHA-256 of the link's
//! **encoding** after `previous`: the UTF-8 bytes of the compact JSON object
//!
//! ```text
//! {"fields":{<path>:<value>,…},"kind":"issue"|"void"|"deletion","number":"<decimal>",
//!  "period":"2026"|null,"previous":"<hex>"|null,"series":"<counter id>","v":1}
//! ```
//!
//! with every object's keys sorted, no whitespace, strings escaped as JSON requires (non-ASCII
//! written as UTF-8) — the bytes Python's `json.dumps(link, separators=(",", ":"),
//! ensure_ascii=False, sort_keys=True)` writes. `fields` holds the sealed fields the document
//! has (a field it lacks is left out), each value in its canonical form ([`canonical`]):
//!
//! | stored value | canonical form |
//! |---|---|
//! | null, boolean, string | itself |
//! | an integral number within ±2^63 (int32, int64 or double) | `{"int": "<decimal>"}` |
//! | any other double (fractions, ±infinity, NaN, beyond ±2^63) | `{"double": "<its 64 bits, 16 lowercase hex digits>"}` |
//! | Decimal128 | `{"decimal": "<its text>"}` |
//! | date | `{"date": "<milliseconds since the epoch>"}` |
//! | ObjectId | `{"oid": "<24 lowercase hex digits>"}` |
//! | array | a JSON array of the canonical forms |
//! | document | `{"doc": {<key>: <canonical form>, …}}` |
//! | any other BSON type | `{"ejson": <its canonical Extended JSON, canonical forms inside>}` |
//!
//! Numbers are forms of their value, not of a driver's type: drivers disagree on types (the Node
//! driver reads an int32 and an integral double alike), and a seal must re-compute anywhere.

pub mod canonical;
pub mod link;
pub mod verify;
