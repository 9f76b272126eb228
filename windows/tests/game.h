/* What every test program shares: the shape of a game's DirectPlay 8 code (COM objects made
 * with CoCreateInstance, a message handler called on DirectPlay's threads, asynchronous
 * operations with handles), and checks that print what they checked.
 *
 * Written from the public DirectPlay 8 API (dplay8.h, dpaddr.h of mingw-w64). Each program
 * prints "ok: ..." per check and exits 0 when all hold, prints "FAIL: ..." and exits 1 at the
 * first that does not. */
#ifndef GAME_H
#define GAME_H

#define COBJMACROS
#define INITGUID
#include <windows.h>
#include <initguid.h>
#include <objbase.h>
#include <dplay8.h>
#include <dpaddr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The application GUID the harness gives `dplay host --app-guid` too. */
DEFINE_GUID(GUID_TEST_APP, 0x5f0d8f1a, 0x3c1b, 0x4e7e, 0x9a, 0x55, 0x1d, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f);

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            printf("FAIL: " __VA_ARGS__);                 \
            printf(" (%s:%d)\n", __FILE__, __LINE__);     \
            fflush(stdout);                               \
            ExitProcess(1);                               \
        }                                                 \
    } while (0)
#define CHECK_HR(hr, what)                                                       \
    do {                                                                         \
        HRESULT hr_ = (hr);                                                      \
        CHECK(SUCCEEDED(hr_), "%s returned 0x%08lx", what, (unsigned long)hr_);  \
    } while (0)
#define OK(...)                          \
    do {                                 \
        printf("ok: " __VA_ARGS__);      \
        printf("\n");                    \
        fflush(stdout);                  \
    } while (0)

/* How long any wait of a test may take, in milliseconds. */
#define WAIT_MS 15000

/* What the handler saw: counts per message and the last of a few kinds, under one lock. */
typedef struct {
    CRITICAL_SECTION lock;
    HANDLE changed; /* auto-reset: set after every message */
    LONG connect_completes, async_completes, send_completes, create_players, destroy_players;
    LONG receives, enum_responses, host_migrates, create_groups, add_to_groups, terminated, enum_queries;
    HRESULT connect_result, async_result, send_result, terminate_result;
    DPNHANDLE async_handle, send_handle;
    void *async_context, *send_context;
    DPNID local_id, new_host, players[16];
    int player_count;
    WCHAR session_name[128];
    IDirectPlay8Address *enum_sender; /* a copy of the last ENUM_HOSTS_RESPONSE's sender */
    DWORD received_bytes, last_receive_size;
    BYTE last_receive[256];
    DWORD handler_thread;
    /* Every SEND_COMPLETE's context and result, in order (the first 16). */
    void *send_contexts[16];
    HRESULT send_results[16];
    DPNID group_owner; /* the last CREATE_GROUP's dpnidOwner */
    BYTE terminate_data[64]; /* the last TERMINATE_SESSION's data (the first 64 bytes) */
    DWORD terminate_size;
    const char *enum_reply; /* a host's response data to ENUM_HOSTS_QUERY (NULL: none) */
    DWORD receive_ms;       /* RECEIVE takes this long before it returns (a slow game) */
} Seen;

static Seen seen;

static inline void seen_init(void)
{
    memset(&seen, 0, sizeof seen);
    InitializeCriticalSection(&seen.lock);
    seen.changed = CreateEventW(NULL, FALSE, FALSE, NULL);
}

/* Waits until *counter reaches at least n; FAIL with `what` after WAIT_MS. */
static inline void wait_count(volatile LONG *counter, LONG n, const char *what)
{
    DWORD until = GetTickCount() + WAIT_MS;
    while (InterlockedCompareExchange((LONG *)counter, 0, 0) < n) {
        LONG left = (LONG)(until - GetTickCount());
        CHECK(left > 0, "timed out waiting for %s", what);
        WaitForSingleObject(seen.changed, (DWORD)left);
    }
}

/* A game's message handler: records what it is given, keeps nothing it must not. */
static inline HRESULT WINAPI handler(void *context, DWORD id, void *msg)
{
    (void)context;
    if (id == DPN_MSGID_RECEIVE && seen.receive_ms)
        Sleep(seen.receive_ms);
    EnterCriticalSection(&seen.lock);
    seen.handler_thread = GetCurrentThreadId();
    switch (id) {
    case DPN_MSGID_CONNECT_COMPLETE: {
        DPNMSG_CONNECT_COMPLETE *m = msg;
        seen.connect_result = m->hResultCode;
        InterlockedIncrement(&seen.connect_completes);
        break;
    }
    case DPN_MSGID_ASYNC_OP_COMPLETE: {
        DPNMSG_ASYNC_OP_COMPLETE *m = msg;
        seen.async_result = m->hResultCode;
        seen.async_handle = m->hAsyncOp;
        seen.async_context = m->pvUserContext;
        InterlockedIncrement(&seen.async_completes);
        break;
    }
    case DPN_MSGID_SEND_COMPLETE: {
        DPNMSG_SEND_COMPLETE *m = msg;
        seen.send_result = m->hResultCode;
        seen.send_handle = m->hAsyncOp;
        seen.send_context = m->pvUserContext;
        if (seen.send_completes < 16) {
            seen.send_contexts[seen.send_completes] = m->pvUserContext;
            seen.send_results[seen.send_completes] = m->hResultCode;
        }
        InterlockedIncrement(&seen.send_completes);
        break;
    }
    case DPN_MSGID_CREATE_PLAYER: {
        DPNMSG_CREATE_PLAYER *m = msg;
        if (seen.player_count < 16)
            seen.players[seen.player_count++] = m->dpnidPlayer;
        InterlockedIncrement(&seen.create_players);
        break;
    }
    case DPN_MSGID_DESTROY_PLAYER:
        InterlockedIncrement(&seen.destroy_players);
        break;
    case DPN_MSGID_RECEIVE: {
        DPNMSG_RECEIVE *m = msg;
        DWORD n = m->dwReceiveDataSize < sizeof seen.last_receive ? m->dwReceiveDataSize : sizeof seen.last_receive;
        memcpy(seen.last_receive, m->pReceiveData, n);
        seen.last_receive_size = m->dwReceiveDataSize;
        seen.received_bytes += m->dwReceiveDataSize;
        InterlockedIncrement(&seen.receives);
        break;
    }
    case DPN_MSGID_ENUM_HOSTS_QUERY: {
        DPNMSG_ENUM_HOSTS_QUERY *m = msg;
        if (seen.enum_reply && strlen(seen.enum_reply) <= m->dwMaxResponseDataSize) {
            m->pvResponseData = (void *)seen.enum_reply;
            m->dwResponseDataSize = (DWORD)strlen(seen.enum_reply);
        }
        InterlockedIncrement(&seen.enum_queries);
        break;
    }
    case DPN_MSGID_ENUM_HOSTS_RESPONSE: {
        DPNMSG_ENUM_HOSTS_RESPONSE *m = msg;
        if (m->pApplicationDescription && m->pApplicationDescription->pwszSessionName)
            lstrcpynW(seen.session_name, m->pApplicationDescription->pwszSessionName, 128);
        /* The address is DirectPlay's for the call only: a game that joins later keeps a copy. */
        if (seen.enum_sender)
            IDirectPlay8Address_Release(seen.enum_sender);
        seen.enum_sender = NULL;
        if (m->pAddressSender)
            IDirectPlay8Address_Duplicate(m->pAddressSender, &seen.enum_sender);
        InterlockedIncrement(&seen.enum_responses);
        break;
    }
    case DPN_MSGID_HOST_MIGRATE: {
        DPNMSG_HOST_MIGRATE *m = msg;
        seen.new_host = m->dpnidNewHost;
        InterlockedIncrement(&seen.host_migrates);
        break;
    }
    case DPN_MSGID_CREATE_GROUP:
        seen.group_owner = ((DPNMSG_CREATE_GROUP *)msg)->dpnidOwner;
        InterlockedIncrement(&seen.create_groups);
        break;
    case DPN_MSGID_ADD_PLAYER_TO_GROUP:
        InterlockedIncrement(&seen.add_to_groups);
        break;
    case DPN_MSGID_TERMINATE_SESSION: {
        DPNMSG_TERMINATE_SESSION *m = msg;
        seen.terminate_result = m->hResultCode;
        seen.terminate_size = m->dwTerminateDataSize;
        if (m->pvTerminateData)
            memcpy(seen.terminate_data, m->pvTerminateData,
                   m->dwTerminateDataSize < sizeof seen.terminate_data ? m->dwTerminateDataSize
                                                                       : sizeof seen.terminate_data);
        InterlockedIncrement(&seen.terminated);
        break;
    }
    default:
        break;
    }
    LeaveCriticalSection(&seen.lock);
    SetEvent(seen.changed);
    return DPN_OK;
}

/* Fails unless the dpnet.dll in this process is ours: Wine's builtin DLLs carry the text
 * "Wine builtin DLL" right after their MZ header, a native DLL does not. */
static inline void check_our_dll(void)
{
    HMODULE dll = GetModuleHandleA("dpnet.dll");
    char path[MAX_PATH] = "";
    CHECK(dll != NULL, "dpnet.dll is not loaded");
    GetModuleFileNameA(dll, path, sizeof path);
    CHECK(memcmp((const char *)dll + 0x40, "Wine builtin DLL", 16) != 0,
          "%s is Wine's builtin dpnet, not ours (is WINEDLLOVERRIDES=dpnet=n set?)", path);
    OK("dpnet.dll is ours: %s", path);
}

/* A TCP/IP address for host:port (port 0: none), as games build them. */
static inline IDirectPlay8Address *make_address(const char *host, DWORD port)
{
    IDirectPlay8Address *a = NULL;
    WCHAR whost[64];
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8Address, NULL, CLSCTX_INPROC_SERVER,
                              &IID_IDirectPlay8Address, (void **)&a),
             "CoCreateInstance(CLSID_DirectPlay8Address)");
    CHECK_HR(IDirectPlay8Address_SetSP(a, &CLSID_DP8SP_TCPIP), "IDirectPlay8Address::SetSP");
    if (host) {
        MultiByteToWideChar(CP_ACP, 0, host, -1, whost, 64);
        CHECK_HR(IDirectPlay8Address_AddComponent(a, DPNA_KEY_HOSTNAME, whost,
                                                  (DWORD)((lstrlenW(whost) + 1) * sizeof(WCHAR)),
                                                  DPNA_DATATYPE_STRING),
                 "AddComponent(hostname)");
    }
    if (port)
        CHECK_HR(IDirectPlay8Address_AddComponent(a, DPNA_KEY_PORT, &port, sizeof port, DPNA_DATATYPE_DWORD),
                 "AddComponent(port)");
    return a;
}

/* CoInitialize and a Peer initialized with our handler. */
static inline IDirectPlay8Peer *make_peer(void)
{
    IDirectPlay8Peer *peer = NULL;
    seen_init();
    CHECK_HR(CoInitializeEx(NULL, COINIT_MULTITHREADED), "CoInitializeEx");
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8Peer, NULL, CLSCTX_INPROC_SERVER, &IID_IDirectPlay8Peer,
                              (void **)&peer),
             "CoCreateInstance(CLSID_DirectPlay8Peer)");
    check_our_dll();
    CHECK_HR(IDirectPlay8Peer_Initialize(peer, NULL, handler, 0), "IDirectPlay8Peer::Initialize");
    return peer;
}

/* The application description of the test sessions. */
static inline DPN_APPLICATION_DESC app_desc(WCHAR *name, DWORD flags)
{
    DPN_APPLICATION_DESC d;
    memset(&d, 0, sizeof d);
    d.dwSize = sizeof d;
    d.dwFlags = flags;
    d.guidApplication = GUID_TEST_APP;
    d.pwszSessionName = name;
    return d;
}

/* Sets our player name (before Host or Connect, as games do). */
static inline void set_name(IDirectPlay8Peer *peer, const WCHAR *name)
{
    DPN_PLAYER_INFO info;
    DPNHANDLE h = 0;
    memset(&info, 0, sizeof info);
    info.dwSize = sizeof info;
    info.dwInfoFlags = DPNINFO_NAME;
    info.pwszName = (WCHAR *)name;
    HRESULT hr = IDirectPlay8Peer_SetPeerInfo(peer, &info, NULL, &h, DPNSETPEERINFO_SYNC);
    CHECK_HR(hr, "SetPeerInfo");
}

/* Connects to host:port asynchronously, as games do: a handle, then CONNECT_COMPLETE. */
static inline void connect_async(IDirectPlay8Peer *peer, const char *host, DWORD port)
{
    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    IDirectPlay8Address *to = make_address(host, port), *device = make_address(NULL, 0);
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_Connect(peer, &d, to, device, NULL, NULL, NULL, 0, NULL, (void *)0xC0, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async Connect returned 0x%08lx, not DPNSUCCESS_PENDING", (unsigned long)hr);
    CHECK(h != 0, "async Connect gave no handle");
    wait_count(&seen.connect_completes, 1, "CONNECT_COMPLETE");
    CHECK_HR(seen.connect_result, "CONNECT_COMPLETE's result");
    OK("connected to %s:%lu (async, CONNECT_COMPLETE S_OK)", host, (unsigned long)port);
    IDirectPlay8Address_Release(to);
    IDirectPlay8Address_Release(device);
}

/* Hosts on 127.0.0.1:port with `flags`. */
static inline void host_on(IDirectPlay8Peer *peer, DWORD port, WCHAR *name, DWORD flags)
{
    DPN_APPLICATION_DESC d = app_desc(name, flags);
    IDirectPlay8Address *device = make_address("127.0.0.1", port);
    CHECK_HR(IDirectPlay8Peer_Host(peer, &d, &device, 1, NULL, NULL, NULL, 0), "IDirectPlay8Peer::Host");
    OK("hosting on 127.0.0.1:%lu", (unsigned long)port);
    IDirectPlay8Address_Release(device);
}

/* Sends text to `to` (DPNID_ALL_PLAYERS_GROUP for everyone), guaranteed, asynchronously. */
static inline void send_text(IDirectPlay8Peer *peer, DPNID to, const char *text)
{
    DPN_BUFFER_DESC b;
    DPNHANDLE h = 0;
    b.dwBufferSize = (DWORD)strlen(text);
    b.pBufferData = (BYTE *)text;
    HRESULT hr = IDirectPlay8Peer_SendTo(peer, to, &b, 1, 0, NULL, &h, DPNSEND_GUARANTEED | DPNSEND_NOLOOPBACK);
    CHECK(hr == DPNSUCCESS_PENDING || hr == S_OK, "SendTo returned 0x%08lx", (unsigned long)hr);
}

/* The player `id`'s information, read into `buf` (512 bytes; FAIL if GetPeerInfo fails). */
static inline DPN_PLAYER_INFO *peer_info(IDirectPlay8Peer *peer, DPNID id, BYTE buf[512])
{
    DWORD size = 512;
    DPN_PLAYER_INFO *info = (DPN_PLAYER_INFO *)buf;
    info->dwSize = sizeof *info;
    CHECK_HR(IDirectPlay8Peer_GetPeerInfo(peer, id, info, &size, 0), "GetPeerInfo");
    return info;
}

/* The player with DPNPLAYER_HOST (FAIL if none). */
static inline DPNID find_host(IDirectPlay8Peer *peer)
{
    for (int i = 0; i < seen.player_count; i++) {
        BYTE buf[512];
        if (peer_info(peer, seen.players[i], buf)->dwPlayerFlags & DPNPLAYER_HOST)
            return seen.players[i];
    }
    CHECK(0, "no player has DPNPLAYER_HOST");
    return 0;
}

static inline DWORD arg_port(int argc, char **argv, int i)
{
    CHECK(argc > i, "usage: %s ... PORT", argv[0]);
    return (DWORD)strtoul(argv[i], NULL, 10);
}

#endif
