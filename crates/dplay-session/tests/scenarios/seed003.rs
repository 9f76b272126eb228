//! Seed 003, MS-DPDX 4.3: a new client joins a session that has an existing client.

use std::time::Duration;

use super::*;

/// The 18 steps of MS-DPDX 4.3 on a clean network, the first EnumQuery lost (step 1): a trace
/// whose session messages come in the seed's order.
#[test]
fn ms_dpdx_4_3_new_client_joins_with_existing_client() {
    let mut mesh = Mesh::new(3, 3, link(0.0), |_, cfg| {
        cfg.application_guid = dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID
    });
    let (server, existing, new) = (0, 1, 2);
    mesh.host(server);
    mesh.join(existing, server);
    assert!(mesh.run_until_joined(&[server, existing], Duration::from_secs(5)));
    mesh.sim.run_for(Duration::from_secs(1));
    mesh.sim.enable_trace_with(describe);
    mesh.sim.note("step 1: the new client enumerates; its first EnumQuery is lost");
    let (s, n) = (mesh.ids[server], mesh.ids[new]);
    mesh.sim.partition(n, s);
    let app = Some(dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID);
    mesh.with(new, |sess, now| sess.enum_hosts(now, addr(server), app)).expect("idle");
    mesh.sim.run_for(Duration::from_millis(100));
    mesh.sim.heal(n, s);
    mesh.sim.run_for(Duration::from_millis(1500));
    let found = events(&mesh, new).iter().find_map(|e| match e {
        Event::HostFound { response, .. } => Some(response.application_instance_guid),
        _ => None,
    });
    let instance = found.expect("step 2: EnumResponse");
    mesh.sim.note("step 3: the new client joins");
    mesh.with(new, |sess, now| sess.join(now, addr(server), Some(instance))).expect("idle");
    assert!(mesh.run_until_joined(&[new], Duration::from_secs(5)));
    mesh.sim.run_for(Duration::from_millis(500));
    let summary = (0..3)
        .map(|i| {
            format!(
                "node {i}: {:?} {:?}",
                session(&mesh, i).phase(),
                session(&mesh, i).name_table().fingerprint()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    mesh.sim.summary(&summary);
    mesh.tables_agree(&[0, 1, 2]).expect("identical name tables");
    let trace = mesh.sim.trace().to_owned();
    assert_seed_order(&trace);
    insta::assert_snapshot!("ms_dpdx_4_3_trace", trace);
}

/// The session messages of the trace, SACKs and KeepAlives aside, follow the seed's steps.
#[track_caller]
fn assert_seed_order(trace: &str) {
    let steps = [
        "EnumQuery",                          // 1 (lost, then again)
        "EnumResponse",                       // 2
        "TRANS_COMMAND_CONNECT",              // 3
        "TRANS_COMMAND_CONNECT_ACCEPT",       // 4, 5
        "TRANS_USERDATA_PLAYER_CONNECT_INFO", // 7
        "TRANS_USERDATA_SEND_SESSION_INFO",   // 8
        "TRANS_USERDATA_ADD_PLAYER",          // 8
        "SESS_PATH_TEST",                     // 9
        "TRANS_USERDATA_ACK_SESSION_INFO",    // 10
        "TRANS_USERDATA_INSTRUCT_CONNECT",    // 11 (server -> existing)
        "TRANS_USERDATA_INSTRUCT_CONNECT",    // 12 (server -> new)
        "TRANS_COMMAND_CONNECT",              // 13
        "TRANS_COMMAND_CONNECT_ACCEPT",       // 14, 15
        "TRANS_USERDATA_SEND_PLAYER_DNID",    // 17
    ];
    let mut rest = trace;
    for step in steps {
        let at =
            rest.find(&format!(" {step}")).unwrap_or_else(|| panic!("{step} missing in order in:\n{trace}"));
        rest = rest.get(at + step.len()..).unwrap_or_default();
    }
}
