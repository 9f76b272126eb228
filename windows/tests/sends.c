/* What a send becomes, and what the host tells a member it removes.
 *
 * join PORT (against a native host): behind a large guaranteed message, a message whose
 * dwTimeOut passes before its turn completes with DPNERR_TIMEDOUT, and a DPNSEND_PRIORITY_HIGH
 * one overtakes a normal one queued before it; each SEND_COMPLETE comes once the host
 * acknowledged the message, in the order they went out; GetSendQueueInfo counts what waits;
 * GetConnectionInfo checks its dwSize and counts what was sent.
 *
 * host PORT / member PORT (two Wine processes): the host creates a group, then a member joins:
 * the member's CREATE_GROUP names the host as the group's owner; a DPNSEND_COMPLETEONPROCESS
 * send of the member completes only once the host's RECEIVE handler, which takes 300 ms,
 * returned; the host removes the member with DestroyPeer and data, which the member reads in
 * TERMINATE_SESSION. */
#include "game.h"

/* How long the host's RECEIVE handler takes in host/member. */
#define RECEIVE_MS 300

static DPNHANDLE send_timed(IDirectPlay8Peer *peer, DPNID to, BYTE *data, DWORD size, DWORD timeout, DWORD flags,
                      void *context)
{
    DPN_BUFFER_DESC b = {size, data};
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, to, &b, 1, timeout, context, &h, flags);
    CHECK(hr == DPNSUCCESS_PENDING && h != 0, "SendTo returned 0x%08lx", (unsigned long)hr);
    return h;
}

static int join(DWORD port)
{
    IDirectPlay8Peer *peer = make_peer();
    connect_async(peer, "127.0.0.1", port);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    DPNID host = find_host(peer);

    static BYTE big[256 * 1024];
    memset(big, 0xB1, sizeof big);
    DPN_BUFFER_DESC x = {1, big};
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, host, &x, 1, 0, NULL, &h,
                                         DPNSEND_GUARANTEED | DPNSEND_PRIORITY_HIGH | DPNSEND_PRIORITY_LOW);
    CHECK(hr == DPNERR_INVALIDFLAGS, "SendTo with both priorities returned 0x%08lx", (unsigned long)hr);
    send_timed(peer, host, big, sizeof big, 0, DPNSEND_GUARANTEED, (void *)1);
    send_timed(peer, host, (BYTE *)"late", 4, 1, DPNSEND_GUARANTEED, (void *)2);
    send_timed(peer, host, (BYTE *)"normal", 6, 0, DPNSEND_GUARANTEED, (void *)3);
    send_timed(peer, host, (BYTE *)"high", 4, 0, DPNSEND_GUARANTEED | DPNSEND_PRIORITY_HIGH, (void *)4);
    DWORD msgs = 0, bytes = 0;
    CHECK_HR(IDirectPlay8Peer_GetSendQueueInfo(peer, host, &msgs, &bytes, 0), "GetSendQueueInfo");
    CHECK(msgs >= 2 && bytes >= 10, "GetSendQueueInfo: %lu messages, %lu bytes queued", (unsigned long)msgs,
          (unsigned long)bytes);
    CHECK_HR(IDirectPlay8Peer_GetSendQueueInfo(peer, host, &msgs, &bytes, DPNGETSENDQUEUEINFO_PRIORITY_HIGH),
             "GetSendQueueInfo(HIGH)");
    CHECK(msgs == 1 && bytes == 4, "GetSendQueueInfo(HIGH): %lu messages, %lu bytes", (unsigned long)msgs,
          (unsigned long)bytes);
    OK("GetSendQueueInfo: the messages behind the large one are counted, by priority too");

    wait_count(&seen.send_completes, 4, "four SEND_COMPLETEs");
    void *order[4] = {(void *)2, (void *)1, (void *)4, (void *)3};
    for (int i = 0; i < 4; i++) {
        CHECK(seen.send_contexts[i] == order[i], "SEND_COMPLETE %d is of send %p, not %p", i, seen.send_contexts[i],
              order[i]);
        HRESULT want = i == 0 ? DPNERR_TIMEDOUT : S_OK;
        CHECK(seen.send_results[i] == want, "SEND_COMPLETE of send %p: 0x%08lx", order[i],
              (unsigned long)seen.send_results[i]);
    }
    OK("SEND_COMPLETE: the timed-out one DPNERR_TIMEDOUT at once, then the large one, the high one, the normal one");
    CHECK_HR(IDirectPlay8Peer_GetSendQueueInfo(peer, host, &msgs, &bytes, 0), "GetSendQueueInfo");
    CHECK(msgs == 0 && bytes == 0, "still queued: %lu messages", (unsigned long)msgs);

    DPN_CONNECTION_INFO info;
    memset(&info, 0, sizeof info);
    hr = IDirectPlay8Peer_GetConnectionInfo(peer, host, &info, 0);
    CHECK(hr == DPNERR_INVALIDPARAM, "GetConnectionInfo with dwSize 0 returned 0x%08lx", (unsigned long)hr);
    info.dwSize = sizeof info;
    CHECK_HR(IDirectPlay8Peer_GetConnectionInfo(peer, host, &info, 0), "GetConnectionInfo");
    CHECK(info.dwPacketsSentGuaranteed > 180 && info.dwBytesSentGuaranteed > sizeof big,
          "GetConnectionInfo: %lu guaranteed packets, %lu bytes sent", (unsigned long)info.dwPacketsSentGuaranteed,
          (unsigned long)info.dwBytesSentGuaranteed);
    CHECK(info.dwMessagesTransmittedHighPriority == 1 && info.dwMessagesTimedOutNormalPriority == 1 &&
              info.dwMessagesTransmittedNormalPriority >= 2,
          "GetConnectionInfo: %lu high sent, %lu normal sent, %lu normal timed out",
          (unsigned long)info.dwMessagesTransmittedHighPriority,
          (unsigned long)info.dwMessagesTransmittedNormalPriority,
          (unsigned long)info.dwMessagesTimedOutNormalPriority);
    CHECK(info.dwPacketsReceivedGuaranteed > 0 && info.dwMessagesReceived > 0 && info.dwRoundTripLatencyMS < 1000,
          "GetConnectionInfo: %lu guaranteed packets received, round trip %lu ms",
          (unsigned long)info.dwPacketsReceivedGuaranteed, (unsigned long)info.dwRoundTripLatencyMS);
    OK("GetConnectionInfo: %lu packets sent guaranteed, %lu retried, round trip %lu ms",
       (unsigned long)info.dwPacketsSentGuaranteed, (unsigned long)info.dwPacketsRetried,
       (unsigned long)info.dwRoundTripLatencyMS);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}

static int host(DWORD port)
{
    IDirectPlay8Peer *peer = make_peer();
    host_on(peer, port, L"sends", 0);
    wait_count(&seen.create_players, 1, "our own CREATE_PLAYER");
    DPNID me = seen.players[0];
    DPN_GROUP_INFO g;
    memset(&g, 0, sizeof g);
    g.dwSize = sizeof g;
    g.dwInfoFlags = DPNINFO_NAME;
    g.pwszName = L"owned";
    CHECK_HR(IDirectPlay8Peer_CreateGroup(peer, &g, NULL, NULL, NULL, DPNCREATEGROUP_SYNC), "CreateGroup");
    wait_count(&seen.create_groups, 1, "our group's CREATE_GROUP");
    CHECK(seen.group_owner == me, "our own group's owner is 0x%08lx, not us", (unsigned long)seen.group_owner);
    seen.receive_ms = RECEIVE_MS;
    printf("ready\n");
    fflush(stdout);
    wait_count(&seen.create_players, 2, "the member's CREATE_PLAYER");
    DPNID member = seen.players[1];
    wait_count(&seen.receives, 1, "the member's COMPLETEONPROCESS message");
    Sleep(1000); /* the member sees its SEND_COMPLETE meanwhile */
    CHECK_HR(IDirectPlay8Peer_DestroyPeer(peer, member, "kicked", 6, 0), "DestroyPeer");
    wait_count(&seen.destroy_players, 1, "the member's DESTROY_PLAYER");
    OK("DestroyPeer with data: the member is gone");
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}

static int member(DWORD port)
{
    IDirectPlay8Peer *peer = make_peer();
    connect_async(peer, "127.0.0.1", port);
    wait_count(&seen.create_players, 2, "CREATE_PLAYER for the host and us");
    wait_count(&seen.create_groups, 1, "CREATE_GROUP of the group that was there");
    DPNID host = find_host(peer);
    CHECK(seen.group_owner == host, "the group's owner is 0x%08lx, not the host 0x%08lx",
          (unsigned long)seen.group_owner, (unsigned long)host);
    OK("CREATE_GROUP of an existing group: dpnidOwner is its creator, the host");
    /* "DPNSEND_COMPLETEONPROCESS: ... when this message has been delivered to the target and the
     * target's message handler returns from indicating its reception" (SendTo's documentation). */
    DWORD started = GetTickCount();
    send_timed(peer, host, (BYTE *)"process me", 10, 0, DPNSEND_GUARANTEED | DPNSEND_COMPLETEONPROCESS,
               (void *)0xE0);
    wait_count(&seen.send_completes, 1, "SEND_COMPLETE of the COMPLETEONPROCESS send");
    DWORD took = GetTickCount() - started;
    CHECK_HR(seen.send_result, "the COMPLETEONPROCESS send's SEND_COMPLETE");
    CHECK(seen.send_context == (void *)0xE0, "SEND_COMPLETE names another send");
    /* GetTickCount may step by up to 16 ms on Windows. */
    CHECK(took + 16 >= RECEIVE_MS, "SEND_COMPLETE came %lu ms after SendTo, before the host's %d ms handler returned",
          (unsigned long)took, RECEIVE_MS);
    OK("DPNSEND_COMPLETEONPROCESS: SEND_COMPLETE %lu ms after SendTo, once the host's %d ms RECEIVE returned",
       (unsigned long)took, RECEIVE_MS);
    wait_count(&seen.terminated, 1, "TERMINATE_SESSION");
    CHECK(seen.terminate_result == DPNERR_HOSTTERMINATEDSESSION, "TERMINATE_SESSION with 0x%08lx",
          (unsigned long)seen.terminate_result);
    CHECK(seen.terminate_size == 6 && memcmp(seen.terminate_data, "kicked", 6) == 0,
          "TERMINATE_SESSION carries %lu bytes, not the host's \"kicked\"", (unsigned long)seen.terminate_size);
    OK("TERMINATE_SESSION: DPNERR_HOSTTERMINATEDSESSION with DestroyPeer's data");
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Close");
    IDirectPlay8Peer_Release(peer);
    return 0;
}

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 2);
    if (strcmp(argv[1], "join") == 0)
        return join(port);
    if (strcmp(argv[1], "host") == 0)
        return host(port);
    return member(port);
}
