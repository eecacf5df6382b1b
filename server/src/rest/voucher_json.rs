//! `POST /api/admin/vouchers`'s and `PATCH /api/admin/vouchers/{id}`'s bodies into the core's
//! [`VoucherDraft`] and [`VoucherPatch`], field by field: a value of the wrong JSON kind gets
//! that field's message ("must be a number", "must be text") instead of reaching the rules as
//! some other text.

use seckill::domain::{FieldErrors, VoucherDraft, VoucherPatch};
use serde_json::{Map, Value};

/// What JSON kind a field takes.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Number,
}

/// The draft's fields in form order, with their kind.
const FIELDS: [(&str, Kind); 8] = [
    ("title", Kind::Text),
    ("description", Kind::Text),
    ("price_cents", Kind::Number),
    ("stock", Kind::Number),
    ("begins_at", Kind::Text),
    ("ends_at", Kind::Text),
    ("opening", Kind::Text),
    ("entries_open_at", Kind::Text),
];

/// The body's schema for the OpenAPI document: the fields of [`FIELDS`], with the kinds read
/// there (a test keeps the two lists the same).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // A schema only: the body is read field by field, above.
pub struct NewVoucherBody {
    /// 1 to 100 characters, no control characters.
    #[schema(min_length = 1, max_length = 100)]
    title: String,
    /// Up to 2,000 characters.
    #[schema(max_length = 2000)]
    description: Option<String>,
    /// In fen (990 is ¥9.90).
    #[schema(minimum = 0, maximum = 100_000_000)]
    price_cents: i64,
    #[schema(minimum = 1, maximum = 10_000_000)]
    stock: i64,
    /// RFC 3339 with its offset, in the future for a draw.
    #[schema(format = DateTime)]
    begins_at: String,
    /// RFC 3339 with its offset, after `begins_at` and in the future.
    #[schema(format = DateTime)]
    ends_at: String,
    /// `first_come` (the default) or `draw`.
    #[schema(pattern = "^(first_come|draw)$")]
    opening: Option<String>,
    /// A draw's entries open (default 10 minutes before `begins_at`), before `begins_at`.
    #[schema(format = DateTime)]
    entries_open_at: Option<String>,
}

/// The edit's body for the OpenAPI document: any of [`NewVoucherBody`]'s fields, by its rules.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // A schema only: the body is read field by field, above.
pub struct VoucherPatchBody {
    #[schema(min_length = 1, max_length = 100)]
    title: Option<String>,
    #[schema(max_length = 2000)]
    description: Option<String>,
    #[schema(minimum = 0, maximum = 100_000_000)]
    price_cents: Option<i64>,
    /// The units the sale offers.
    #[schema(minimum = 1, maximum = 10_000_000)]
    stock: Option<i64>,
    /// Not for a draw (its start names its beacon round).
    #[schema(format = DateTime)]
    begins_at: Option<String>,
    #[schema(format = DateTime)]
    ends_at: Option<String>,
    /// A first-come sale may become a draw; a draw stays one.
    #[schema(pattern = "^(first_come|draw)$")]
    opening: Option<String>,
    #[schema(format = DateTime)]
    entries_open_at: Option<String>,
}

/// Each field of [`FIELDS`] the body names (not `null`), as text; a value of the wrong kind is
/// named in the errors and read as not named.
fn named(body: &Map<String, Value>) -> ([Option<String>; 8], FieldErrors) {
    let mut kinds = FieldErrors::default();
    let mut text = |name: &str, kind: Kind| match (kind, body.get(name)) {
        (_, None | Some(Value::Null)) => None,
        (Kind::Text, Some(Value::String(s))) => Some(s.clone()),
        (Kind::Number, Some(Value::Number(n))) => Some(n.to_string()),
        (Kind::Text, Some(_)) => {
            kinds.push(name, "must be text");
            None
        }
        (Kind::Number, Some(_)) => {
            kinds.push(name, "must be a number");
            None
        }
    };
    (FIELDS.map(|(name, kind)| text(name, kind)), kinds)
}

/// The draft as text (a missing or `null` field is empty), and the fields whose value was of
/// the wrong kind (left empty in the draft).
pub fn draft(body: &Map<String, Value>) -> (VoucherDraft, FieldErrors) {
    let (fields, kinds) = named(body);
    let [title, description, price_cents, stock, begins_at, ends_at, opening, entries_open_at] =
        fields.map(Option::unwrap_or_default);
    let draft = VoucherDraft {
        title,
        description,
        price_cents,
        stock,
        begins_at,
        ends_at,
        opening,
        entries_open_at,
    };
    (draft, kinds)
}

/// `PATCH /api/admin/vouchers/{id}`'s body: the fields it names (a missing or `null` field is
/// left as it is), and the fields whose value was of the wrong kind.
pub fn patch(body: &Map<String, Value>) -> (VoucherPatch, FieldErrors) {
    let (fields, kinds) = named(body);
    let [title, description, price_cents, stock, begins_at, ends_at, opening, entries_open_at] =
        fields;
    let patch = VoucherPatch {
        title,
        description,
        price_cents,
        stock,
        begins_at,
        ends_at,
        opening,
        entries_open_at,
    };
    (patch, kinds)
}

#[cfg(test)]
mod schema_tests {
    use utoipa::PartialSchema;

    #[test]
    fn the_documented_body_has_the_fields_the_parser_reads() {
        let mut read: Vec<&str> = super::FIELDS.iter().map(|(name, _)| *name).collect();
        read.sort_unstable();
        for schema in [
            super::NewVoucherBody::schema(),
            super::VoucherPatchBody::schema(),
        ] {
            let schema = serde_json::to_value(schema).expect("json");
            let mut documented: Vec<&str> = schema["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .map(String::as_str)
                .collect();
            documented.sort_unstable();
            assert_eq!(documented, read);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kinds_of(body: Value) -> FieldErrors {
        let Value::Object(map) = body else {
            panic!("an object")
        };
        draft(&map).1
    }

    #[test]
    fn a_well_typed_body_becomes_the_draft() {
        let Value::Object(map) = json!({"title": "T", "description": null, "price_cents": 990,
            "stock": 5, "begins_at": "a", "ends_at": "b"})
        else {
            panic!("an object")
        };
        let (d, kinds) = draft(&map);
        assert!(kinds.is_empty());
        assert_eq!(
            (d.title.as_str(), d.price_cents.as_str(), d.stock.as_str()),
            ("T", "990", "5")
        );
        assert_eq!(d.description, "");
    }

    #[test]
    fn each_text_field_refuses_other_kinds() {
        for field in [
            "title",
            "description",
            "begins_at",
            "ends_at",
            "opening",
            "entries_open_at",
        ] {
            for wrong in [json!(5), json!(true), json!(["x"]), json!({"a": 1})] {
                let kinds = kinds_of(json!({ field: wrong }));
                assert_eq!(kinds.get(field), Some("must be text"), "{field} = {wrong}");
            }
        }
    }

    #[test]
    fn each_number_field_refuses_other_kinds() {
        for field in ["price_cents", "stock"] {
            for wrong in [json!("5"), json!(false), json!([1]), json!({})] {
                let kinds = kinds_of(json!({ field: wrong }));
                assert_eq!(
                    kinds.get(field),
                    Some("must be a number"),
                    "{field} = {wrong}"
                );
            }
        }
    }
}
