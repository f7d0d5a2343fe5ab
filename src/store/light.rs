//! Reading inbox entries fast: only the few fields a caller needs, strings borrowed from the
//! file where they have no escapes, every other key skipped without being kept. Used where
//! whole inboxes are scanned (status, the idempotency check).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// An inbox entry, reading only a few fields; other keys are skipped without being kept.
#[derive(Deserialize)]
pub(crate) struct LightEntry<'a> {
    #[serde(default, borrow)]
    pub(crate) from: Loose<'a>,
    #[serde(default, borrow)]
    pub(crate) text: Loose<'a>,
    #[serde(default, borrow)]
    pub(crate) timestamp: Loose<'a>,
    #[serde(default, borrow)]
    pub(crate) read: Loose<'a>,
    #[serde(default, borrow)]
    pub(crate) msg_id: Loose<'a>,
    #[serde(default, borrow, rename = "messageId")]
    pub(crate) message_id: Loose<'a>,
    #[serde(default, rename = "msgV")]
    pub(crate) msg_v: Option<IgnoredAny>,
}

impl LightEntry<'_> {
    /// The entry's id, by the rule of [`crate::store::id::entry_id`].
    pub(crate) fn id(&self) -> String {
        crate::store::id::id_of(
            self.msg_id.as_str(),
            self.message_id.as_str(),
            self.from.as_str(),
            self.timestamp.as_str(),
            self.text.as_str(),
        )
    }
}

/// A protocol frame's `type` and `approve`.
#[derive(Deserialize)]
pub(crate) struct LightFrame<'a> {
    #[serde(default, borrow, rename = "type")]
    pub(crate) kind: Loose<'a>,
    #[serde(default, borrow)]
    pub(crate) approve: Loose<'a>,
}

/// Any JSON value, keeping only a string (borrowed when it has no escapes) or a bool.
#[derive(Debug, Default)]
pub(crate) enum Loose<'a> {
    Str(Cow<'a, str>),
    Bool(bool),
    #[default]
    Other,
}

impl Loose<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Loose::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Loose::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Loose::Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Loose::Str(Cow::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Loose::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Loose::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Loose::Other)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loose_keeps_strings_and_bools_only() {
        let v: Vec<LightEntry> = serde_json::from_str(
            r#"[{"from":"a","text":"x\ny","timestamp":1,"read":true,"msgV":1,"extra":{"n":[1.5e+21]}},{"from":{"x":1},"read":"no"}]"#,
        )
        .unwrap();
        assert_eq!(v[0].from.as_str(), Some("a"));
        assert_eq!(v[0].text.as_str(), Some("x\ny"));
        assert_eq!(v[0].timestamp.as_str(), None);
        assert_eq!(v[0].read.as_bool(), Some(true));
        assert!(v[0].msg_v.is_some() && v[1].msg_v.is_none());
        assert_eq!(v[1].from.as_str(), None);
        assert_eq!(v[1].read.as_bool(), None);
    }
}
