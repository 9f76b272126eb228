//! What an FS2004 host must send (issue 16): chat (0x1017) to everyone, and the removal of a
//! player, which FS2004 has no packet for: the DirectPlay 8 host destroys it (MC-DPL8CS
//! 3.2.5.2).

use std::time::Duration;

use dplay_addon::packet::ZString;
use dplay_addon::{Event, Role};
use dplay_sim::run_seeds;

use crate::nodes::{Kind, Net, link};

#[test]
fn the_fs2004_host_chats_and_removes() {
    run_seeds(3, |seed| {
        let mut net = Net::new(seed, link(0.05));
        let (host, swift, tower) =
            (net.add(Kind::Host), net.add(Kind::Swift), net.add(Kind::Ours(Role::Observer)));
        net.start(host, host);
        net.start(swift, host);
        net.start(tower, host);
        assert!(net.run_until_joined(&[swift, tower], Duration::from_secs(30)), "seed {seed}");
        net.sim.run_for(Duration::from_secs(2));

        let text = ZString::from_text("Grüße from the tower");
        net.with(host, |n, now| n.bridge.with_host(now, |h, now| h.send_chat(now, text.clone())))
            .expect("host");
        let id = net.player_id(swift);
        net.with(host, |n, now| n.bridge.with_host(now, |h, now| h.remove_player(now, id))).expect("host");
        net.sim.run_for(Duration::from_secs(10));

        let from = net.player_id(host);
        assert!(net.ours_node(tower).saw(&Event::Chat { from, text }), "seed {seed}");
        assert!(!net.session(swift).is_joined(), "seed {seed}: the removed peer is still in");
        assert!(net.ours_node(tower).saw(&Event::PlayerLeft { id }), "seed {seed}");
        assert!(net.ours_node(host).saw(&Event::Remove { id }));
    });
}
