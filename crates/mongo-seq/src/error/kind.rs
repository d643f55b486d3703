//! [`ErrorKind`]: every code of [`Error`](crate::Error) as one flat enum, listed once (the
//! macro below), so a caller matches one level deep, as with sqlx's or redis-rs's `kind()`.

macro_rules! kinds {
    ($($(#[doc = $doc:literal])* $kind:ident => $code:literal,)*) => {
        /// What went wrong, one variant per stable code ([`Error::kind`](crate::Error::kind)).
        ///
        /// ```
        /// use mongo_seq::{ErrorKind, SequenceOptions, Sequences};
        /// # async fn example(db: mongodb::Database) {
        /// let error = Sequences::new(&db).sequence("orders", SequenceOptions::new().step(0)).unwrap_err();
        /// match error.kind() {
        ///     ErrorKind::InvalidStep => {}
        ///     other => panic!("{other:?}"),
        /// }
        /// assert_eq!(ErrorKind::InvalidStep.code(), Some("INVALID_STEP"));
        /// # }
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[doc = $doc])* #[doc = concat!("\n\nCode `", $code, "`.")] $kind,)*
            /// The driver failed or the server refused ([`Error::Mongo`](crate::Error::Mongo)):
            /// no code.
            Mongo,
        }

        impl ErrorKind {
            /// Every kind with a code, in the order of [`Error::codes`](crate::Error::codes).
            pub const ALL: &'static [ErrorKind] = &[$(Self::$kind,)*];

            /// The stable code (`None` for [`ErrorKind::Mongo`]).
            pub fn code(self) -> Option<&'static str> {
                match self {
                    $(Self::$kind => Some($code),)*
                    Self::Mongo => None,
                }
            }

            /// The kind of a code.
            pub(crate) fn of_code(code: &str) -> Option<Self> {
                match code {
                    $($code => Some(Self::$kind),)*
                    _ => None,
                }
            }
        }
    };
}

kinds! {
    /// An option key is unknown (configuration files).
    UnknownOption => "UNKNOWN_OPTION",
    /// An option has an unusable value.
    InvalidOption => "INVALID_OPTION",
    /// `step` is 0.
    InvalidStep => "INVALID_STEP",
    /// `min > max`, or `start` outside `[min, max]`.
    InvalidBounds => "INVALID_BOUNDS",
    /// The sequence name breaks the naming rules.
    InvalidName => "INVALID_NAME",
    /// A scope field path is invalid.
    InvalidScope => "INVALID_SCOPE",
    /// The format template is invalid.
    InvalidFormat => "INVALID_FORMAT",
    /// A document or scope lacks a scope field.
    MissingScopeField => "MISSING_SCOPE_FIELD",
    /// A scope value cannot name a counter.
    InvalidScopeValue => "INVALID_SCOPE_VALUE",
    /// An argument is unusable.
    InvalidArgument => "INVALID_ARGUMENT",
    /// A date cannot place a number in a period.
    InvalidDate => "INVALID_DATE",
    /// Not enough numbers left before the bound.
    SequenceExhausted => "SEQUENCE_EXHAUSTED",
    /// A value outside `[min, max]`.
    OutOfBounds => "OUT_OF_BOUNDS",
    /// The 64-bit range would be exceeded.
    Overflow => "OVERFLOW",
    /// A counter that cannot be used as it is.
    MalformedCounter => "MALFORMED_COUNTER",
    /// A number field read back holds a non-integer.
    MalformedDocument => "MALFORMED_DOCUMENT",
    /// A reply of the wrong kind or shape (should not happen).
    UnexpectedReply => "UNEXPECTED_REPLY",
    /// `set_next` would move the counter backwards.
    BackwardsRefused => "BACKWARDS_REFUSED",
    /// Too many lost races in one operation.
    TooManyRetries => "TOO_MANY_RETRIES",
    /// A counter does not match a plan's extra conditions (should not happen).
    ConditionNotMet => "CONDITION_NOT_MET",
    /// A lease document has the wrong shape (the sidecar's).
    MalformedLease => "MALFORMED_LEASE",
    /// A later lease holder touched the counter (the sidecar's).
    Fenced => "FENCED",
    /// A statement of a write command failed.
    WriteFailed => "WRITE_FAILED",
    /// The server could not satisfy a write concern.
    WriteConcernFailed => "WRITE_CONCERN_FAILED",
    /// Another unique index on the counters collection refused a write.
    UniqueIndexConflict => "UNIQUE_INDEX_CONFLICT",
    /// `rewind_all` refused.
    RewindRefused => "REWIND_REFUSED",
    /// A number taken on purpose outside a sidecar's gapless numbering (the mongoose plugin's
    /// `doc.setNext()`) refused.
    GaplessRefused => "GAPLESS_REFUSED",
    /// The counters collection is sharded on a key its writes cannot use.
    UnsupportedShardKey => "UNSUPPORTED_SHARD_KEY",
    /// Another definition of the sequence (by name, or recorded on the counter).
    SequenceConflict => "SEQUENCE_CONFLICT",
    /// A void of a number already voided.
    AlreadyVoided => "ALREADY_VOIDED",
    /// A void while a gapless intent is pending on the counter.
    IntentPending => "INTENT_PENDING",
    /// A void of a number a document holds.
    NumberHeld => "NUMBER_HELD",
    /// A void of a number the counter has not issued.
    NumberNotIssued => "NUMBER_NOT_ISSUED",
    /// `wait_for_number` saw no number in time.
    WaitTimeout => "WAIT_TIMEOUT",
}
