//! Errors in the caller's spelling: the core names options and arguments as an options object
//! spells them (`timeZone`, `formatField`); a Rust caller (builder methods `time_zone`,
//! `format_field`) and a configuration file read them in snake_case.

use crate::error::SeqError;
use crate::sequence::options::SequenceSpec;

impl SeqError {
    /// The message with option and argument names in `spelling` (`time_zone` for a Rust
    /// caller; [`Spelling::Camel`]: the message itself).
    pub fn message_in(&self, spelling: Spelling) -> String {
        respell(&self.to_string(), spelling)
    }
}

/// How a caller spells option and argument names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spelling {
    /// As an options object (JS, JSON): `timeZone`, `maxBlock`, `formatField`.
    #[default]
    Camel,
    /// As Rust and the configuration files: `time_zone`, `max_block`, `format_field`.
    Snake,
}

/// The arguments of the operations that are not sequence options, in both spellings.
const ARGUMENTS: [(&str, &str); 6] = [
    ("formatField", "format_field"),
    ("dateField", "date_field"),
    ("maxAttempts", "max_attempts"),
    ("minCount", "min_count"),
    ("extraFilter", "extra_filter"),
    ("extraSet", "extra_set"),
];

/// Every name spelled differently in snake_case, as (key, snake): options, then arguments.
fn renamed() -> impl Iterator<Item = (&'static str, &'static str)> {
    SequenceSpec::OPTIONS
        .iter()
        .map(|option| (option.key, option.snake))
        .chain(ARGUMENTS)
        .filter(|(key, snake)| key != snake)
}

/// `name` (an option's or argument's key) in `spelling`; a name not in the tables as it is.
pub fn spell(name: &str, spelling: Spelling) -> &str {
    match spelling {
        Spelling::Camel => name,
        Spelling::Snake => renamed()
            .find(|(key, _)| *key == name)
            .map_or(name, |(_, snake)| snake),
    }
}

/// `message` with every option and argument name, as a whole word, in `spelling`.
pub fn respell(message: &str, spelling: Spelling) -> String {
    let mut text = message.to_owned();
    if spelling == Spelling::Snake {
        for (key, snake) in renamed() {
            text = replace_word(&text, key, snake);
        }
    }
    text
}

/// Replaces `word` where it stands alone (not inside a longer identifier).
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_identifier = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let (before, from) = rest.split_at(at);
        let after = &from[word.len()..];
        out.push_str(before);
        let alone = !out.chars().next_back().is_some_and(is_identifier)
            && !after.chars().next().is_some_and(is_identifier);
        out.push_str(if alone { with } else { word });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_respelled_as_whole_words_only() {
        let message = "invalid option `timeZone`: … (known options: name, maxBlock, timeZones, my_timeZone, yearStart)";
        assert_eq!(
            respell(message, Spelling::Snake),
            "invalid option `time_zone`: … (known options: name, max_block, timeZones, my_timeZone, year_start)"
        );
        assert_eq!(respell(message, Spelling::Camel), message);
        assert_eq!(spell("formatField", Spelling::Snake), "format_field");
        assert_eq!(spell("max", Spelling::Snake), "max");
        assert_eq!(spell("colour", Spelling::Snake), "colour");
    }
}
