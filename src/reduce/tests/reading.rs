//! How a line is read: an event, or a provider's line to convert.

#[test]
fn a_line_is_read_as_an_event_when_its_event_member_is_a_string() {
    use crate::detect::Probe;
    use crate::reduce::{kind, Kind};
    let cases = [
        (r#"{"event":"text","text":"hi"}"#, Some(true)),
        (r#"{"seq":1, "event" : "text"}"#, Some(true)),
        (r#"{"ev\u0065nt":"text"}"#, Some(true)),
        (
            r#"{"type":"stream_event","event":{"type":"message_start"}}"#,
            Some(false),
        ),
        (
            r#"{"type":"assistant","text":"say \"event\" twice"}"#,
            Some(false),
        ),
        (r#"{"type":"x","data":{"event":"y"}}"#, Some(false)),
        (r#"{"type":"system","subtype":"init"}"#, Some(false)),
        // What the converter reports: not an object (an array serde would read as the
        // probe's fields), not JSON, not UTF-8.
        (r#"[null,null,null]"#, None),
        (r#"{"type":"#, None),
        ("{\"type\":\"\u{fffd}\"}", Some(false)),
    ];
    for (line, event) in cases {
        let got = match kind(line.as_bytes(), &mut Probe::default()) {
            Kind::Event(_) => Some(true),
            Kind::Provider(..) => Some(false),
            Kind::Unreadable => None,
        };
        assert_eq!(got, event, "{line}");
    }
    assert!(matches!(
        kind(b"{\"type\":\"\xff\"}", &mut Probe::default()),
        Kind::Unreadable
    ));
}
