use super::*;

/// A reply of OpenSSL's own authority (`openssl ts -reply`, P-256 key, sha256) to
/// `timestamp_request(&IMPRINT, 0x1234_5678_9abc_def0)` at 2026-11-28T09:57:13Z.
const GRANTED: &str = "308203b83003020100308203af06092a864886f70d010702a08203a03082039c020103310f300d060960864801650304020105003077060b2a864886f70d0109100104a0680466306402010106092b0601040183d45f013031300d060960864801650304020105000420ef0c6f348abe3d2985e19f602ddcaa517e053d1876a678390d6faba6c26ebf8c020102180f32303236313132383039353731335a30030201010208123456789abcdef0a08201bc308201b83082015ea0030201020214607491e3ab25dfdce185eb4a00a72121ee8bc4aa300a06082a8648ce3d040302301f311d301b06035504030c147365636b696c6c207374616e642d696e20545341301e170d3236313132383039353731325a170d3336313132353039353731325a301f311d301b06035504030c147365636b696c6c207374616e642d696e205453413059301306072a8648ce3d020106082a8648ce3d030107034200047eff828779e30785706ee252dd733ee77f15e71dd3be07d04a43156d823a0fb933c76838c4afee8907aaa4cbc2e446eab5fe69b9bb7e8a398dd9760fb84a7076a3783076301d0603551d0e04160414a5f68ef91f528b3cbc81d5951d7292c8198deabb301f0603551d23041830168014a5f68ef91f528b3cbc81d5951d7292c8198deabb30160603551d250101ff040c300a06082b06010505070308300e0603551d0f0101ff040403020780300c0603551d130101ff04023000300a06082a8648ce3d040302034800304502207268525d7d868881ecf55d6bfc6dc4c14656835b01595ddd7826b811e402233f022100caf6e5850d742b7b6221d0da20b916ca5c4365a5c4b5aaae01fe5df2a977094a3182014b308201470201013037301f311d301b06035504030c147365636b696c6c207374616e642d696e205453410214607491e3ab25dfdce185eb4a00a72121ee8bc4aa300d06096086480165030402010500a081a4301a06092a864886f70d010903310d060b2a864886f70d0109100104301c06092a864886f70d010905310f170d3236313132383039353731335a302f06092a864886f70d01090431220420cf17216de97da8541c4c0e3fa921f777a53a5ae20d905ffe908ec0d9b8de79b03037060b2a864886f70d010910022f31283026302430220420486d1dc710b154f5124832e6b329331ff2ffb0ab35beccb3ca25478e2a2a5878300a06082a8648ce3d04030204473045022021b6c56eb2ad3f7913cb99d741b01a7b7dedb68d822d13e6ca75d7ce5cc88b79022100f706afa56a0866de54b96b5fbde9236fb5d3a1495880e61ed996b757fe4f1b4c";
/// Its answer to a SHA-1 query: rejected, "Message digest algorithm is not supported".
const REJECTED: &str = "30373035020102302c0c2a4d6573736167652064696765737420616c676f726974686d206973206e6f7420737570706f727465642e03020780";
/// `witness_imprint(1, &[0xab; 32], Some(123))`.
const IMPRINT: &str = "ef0c6f348abe3d2985e19f602ddcaa517e053d1876a678390d6faba6c26ebf8c";

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

#[test]
fn the_imprint_covers_the_voucher_the_root_and_the_round() {
    let imprint = witness_imprint(1, &[0xab; 32], Some(123));
    assert_eq!(hex::encode(imprint), IMPRINT);
    assert_ne!(imprint, witness_imprint(2, &[0xab; 32], Some(123)));
    assert_ne!(imprint, witness_imprint(1, &[0xac; 32], Some(123)));
    assert_ne!(imprint, witness_imprint(1, &[0xab; 32], Some(124)));
    assert!(witness_message(1, &[0; 32], None).ends_with(":-"));
}

#[test]
fn the_request_is_the_der_openssl_reads() {
    let imprint: Hash = unhex(IMPRINT).try_into().expect("32 bytes");
    let req = timestamp_request(&imprint, 0x1234_5678_9abc_def0);
    // Read back with this module's reader: version 1, the SHA-256 imprint, the nonce, certReq.
    let (body, rest) = expect(&req, 0x30).expect("a SEQUENCE");
    assert!(rest.is_empty());
    let (version, body) = expect(body, 0x02).expect("version");
    assert_eq!(version, [1]);
    let (mi, body) = expect(body, 0x30).expect("imprint");
    let (alg, hashed) = expect(mi, 0x30).expect("algorithm");
    assert_eq!(expect(alg, 0x06).expect("oid").0, SHA256_OID);
    assert_eq!(expect(hashed, 0x04).expect("hash").0, imprint);
    let (nonce, body) = expect(body, 0x02).expect("nonce");
    assert_eq!(nonce, 0x1234_5678_9abc_def0u64.to_be_bytes());
    assert_eq!(expect(body, 0x01).expect("certReq").0, [0xff]);
    // A nonce with its top bit set is sent positive.
    let req = timestamp_request(&imprint, u64::MAX);
    assert!(req
        .windows(9)
        .any(|w| w == [0x08, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
}

/// The nonce as the request carries it: the INTEGER's content octets.
fn nonce_of(req: &[u8]) -> Vec<u8> {
    let (body, _) = expect(req, 0x30).expect("a SEQUENCE");
    let (_, body) = expect(body, 0x02).expect("version");
    let (_, body) = expect(body, 0x30).expect("imprint");
    expect(body, 0x02).expect("nonce").0.to_vec()
}

#[test]
fn a_nonce_is_encoded_in_as_few_bytes_as_der_allows() {
    // One random nonce in 256 starts with a zero byte followed by one below 0x80: sent as eight
    // bytes, OpenSSL refused the query ("illegal padding") and the close went unwitnessed.
    let imprint: Hash = unhex(IMPRINT).try_into().expect("32 bytes");
    for (nonce, octets) in [
        (
            0x0012_3456_789a_bcde_u64,
            vec![0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde],
        ),
        (0x0000_0000_0000_0001, vec![0x01]),
        (0, vec![0x00]),
        // A top bit set once the zeros are gone: a zero byte keeps the value positive.
        (0x0080_0000_0000_0000, vec![0x00, 0x80, 0, 0, 0, 0, 0, 0]),
        (0x0000_00ff_0000_0000, vec![0x00, 0xff, 0, 0, 0, 0]),
    ] {
        let req = timestamp_request(&imprint, nonce);
        assert_eq!(nonce_of(&req), octets, "{nonce:#x}");
        assert_eq!(
            usize::from(req[1]) + 2,
            req.len(),
            "{nonce:#x}: the outer length"
        );
    }
}

#[test]
fn a_granted_reply_gives_its_token_and_the_token_its_facts() {
    let token = token_of_reply(&unhex(GRANTED)).expect("granted");
    let facts = read_token(&token).expect("a token");
    assert_eq!(hex::encode(facts.imprint), IMPRINT);
    assert_eq!(facts.at.to_rfc3339(), "2026-11-28T09:57:13+00:00");
    assert_eq!(
        facts.nonce,
        Some(0x1234_5678_9abc_def0u64.to_be_bytes().to_vec())
    );
    assert!(facts.echoes(0x1234_5678_9abc_def0));
    assert!(!facts.echoes(0x1234_5678_9abc_def1));
    // The token is the reply's whole ContentInfo, as `openssl ts -reply -token_out` writes it.
    assert!(unhex(GRANTED).ends_with(&token));
}

#[test]
fn a_refusal_or_bytes_that_are_not_a_token_are_said() {
    assert_eq!(
        token_of_reply(&unhex(REJECTED)),
        Err(WitnessError::Refused(2))
    );
    let token = token_of_reply(&unhex(GRANTED)).expect("granted");
    for cut in [0, 1, 10, token.len() / 2, token.len() - 1] {
        assert!(read_token(&token[..cut]).is_err(), "cut at {cut}");
    }
    assert!(token_of_reply(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]).is_err());
    let mut other = token.clone();
    // The signedData OID's last byte: another content type.
    let at = other
        .windows(9)
        .position(|w| w == SIGNED_DATA_OID)
        .expect("oid");
    other[at + 8] = 0x01;
    assert_eq!(read_token(&other), Err(WitnessError::NotATimestamp));
}

#[test]
fn generalized_times_with_and_without_fractions_read() {
    let t = |s: &str| generalized_time(s.as_bytes());
    assert_eq!(
        t("20261128095713Z").expect("t").to_rfc3339(),
        "2026-11-28T09:57:13+00:00"
    );
    assert_eq!(
        t("20261128095713.25Z").expect("t").to_rfc3339(),
        "2026-11-28T09:57:13.250+00:00"
    );
    for bad in [
        "20261128095713",
        "2026112809571Z",
        "20261328095713Z",
        "20261128095713.Z1",
        "x",
    ] {
        assert!(t(bad).is_err(), "{bad}");
    }
}

/// A transcript of voucher 1 drawn on `round`, witnessed by the GRANTED token as stated `at`.
fn witnessed(round: u64, at: &str) -> Transcript {
    let token = hex::encode(token_of_reply(&unhex(GRANTED)).expect("granted"));
    serde_json::from_value(serde_json::json!({
        "voucher_id": 1, "commitment": "00".repeat(32),
        "entries_open_at": "2026-11-28T09:00:00Z", "closes_at": "2026-11-28T09:57:00Z",
        "beacon": {"url": "http://relay", "chain_hash": "52db", "round": round},
        "receipt_key": {"ed25519": "00".repeat(32), "id": "00"},
        "entrants": 0,
        "witness": {"tsa": "http://tsa", "at": at, "token": token},
    }))
    .expect("a transcript")
}

/// A chain whose round `r` is emitted at 2026-11-28T09:57:00Z + 3 (r - 1) s.
fn clock() -> BeaconCheck {
    BeaconCheck::Timed {
        chain: super::super::Chain {
            genesis_time: 1_795_859_820,
            period: 3,
        },
        margin: None,
    }
}

#[test]
fn a_token_over_this_draw_before_its_round_is_a_witness() {
    let root = [0xab; 32];
    let t = witnessed(123, "2026-11-28T09:57:13Z");
    // Round 123 is emitted at 10:03:06: the token (09:57:13) came before it.
    let at = "2026-11-28T09:57:13Z".parse().expect("time");
    assert_eq!(
        check(&t, &root, &clock()),
        Ok(Witnessed::BeforeRound { at })
    );
    assert_eq!(
        check(&t, &root, &BeaconCheck::Untimed),
        Ok(Witnessed::Unclocked { at })
    );
    let mut absent = t.clone();
    absent.witness = None;
    assert_eq!(check(&absent, &root, &clock()), Ok(Witnessed::Absent));
}

#[test]
fn a_token_over_another_list_round_or_time_is_refused() {
    let root = [0xab; 32];
    let refused =
        |t: &Transcript, root: &Hash| matches!(check(t, root, &clock()), Err(Mismatch::Witness(_)));
    // Another root, another round: the imprint differs.
    assert!(refused(
        &witnessed(123, "2026-11-28T09:57:13Z"),
        &[0xac; 32]
    ));
    assert!(refused(&witnessed(124, "2026-11-28T09:57:13Z"), &root));
    // The transcript states another time than the token.
    assert!(refused(&witnessed(123, "2026-11-28T09:50:00Z"), &root));
    // Round 1 was emitted at 09:57:00, before the token: it proves nothing about the list.
    let early = BeaconCheck::Timed {
        chain: super::super::Chain {
            genesis_time: 1_795_859_820 - 366,
            period: 3,
        },
        margin: None,
    };
    let t = witnessed(123, "2026-11-28T09:57:13Z");
    assert!(
        matches!(check(&t, &root, &early), Err(Mismatch::Witness(w)) if w.contains("once round 123"))
    );
    let mut garbled = t.clone();
    if let Some(w) = garbled.witness.as_mut() {
        w.token.truncate(40);
    }
    assert!(refused(&garbled, &root));
}
