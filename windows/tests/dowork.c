/* The DirectX 9 thread pool's DoWork mode, for games that run DirectPlay on their own thread:
 * SetThreadCount(0), then an enumeration of the native host whose every callback arrives
 * inside DoWork on this thread. Usage: dowork.exe PORT */
#include "game.h"

int main(int argc, char **argv)
{
    DWORD port = arg_port(argc, argv, 1);
    IDirectPlay8ThreadPool *pool = NULL;
    DWORD count = 99;
    seen_init();
    CHECK_HR(CoInitializeEx(NULL, COINIT_MULTITHREADED), "CoInitializeEx");
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8ThreadPool, NULL, CLSCTX_INPROC_SERVER,
                              &IID_IDirectPlay8ThreadPool, (void **)&pool),
             "CoCreateInstance(CLSID_DirectPlay8ThreadPool)");
    check_our_dll();
    CHECK_HR(IDirectPlay8ThreadPool_Initialize(pool, NULL, handler, 0), "ThreadPool::Initialize");
    CHECK_HR(IDirectPlay8ThreadPool_SetThreadCount(pool, (DWORD)-1, 0, 0), "SetThreadCount(0)");
    CHECK_HR(IDirectPlay8ThreadPool_GetThreadCount(pool, (DWORD)-1, &count, 0), "GetThreadCount");
    CHECK(count == 0, "GetThreadCount says %lu threads after SetThreadCount(0)", (unsigned long)count);
    OK("SetThreadCount(0): no DirectPlay threads");

    IDirectPlay8Peer *peer = NULL;
    CHECK_HR(CoCreateInstance(&CLSID_DirectPlay8Peer, NULL, CLSCTX_INPROC_SERVER, &IID_IDirectPlay8Peer,
                              (void **)&peer),
             "CoCreateInstance(CLSID_DirectPlay8Peer)");
    CHECK_HR(IDirectPlay8Peer_Initialize(peer, NULL, handler, 0), "Peer::Initialize");
    DPN_APPLICATION_DESC d = app_desc(NULL, 0);
    IDirectPlay8Address *to = make_address("127.0.0.1", port), *device = make_address(NULL, 0);
    DPNHANDLE h = 0;
    HRESULT hr = IDirectPlay8Peer_EnumHosts(peer, &d, to, device, NULL, 0, 2, 300, 1500, NULL, &h, 0);
    CHECK(hr == DPNSUCCESS_PENDING, "async EnumHosts returned 0x%08lx", (unsigned long)hr);
    DWORD until = GetTickCount() + WAIT_MS;
    while (seen.async_completes == 0) {
        CHECK((LONG)(until - GetTickCount()) > 0, "no ASYNC_OP_COMPLETE from DoWork");
        hr = IDirectPlay8ThreadPool_DoWork(pool, 100, 0);
        CHECK(hr == DPN_OK || hr == DPNSUCCESS_PENDING, "DoWork returned 0x%08lx", (unsigned long)hr);
    }
    CHECK(seen.enum_responses >= 1, "the enumeration found nothing");
    CHECK(seen.handler_thread == GetCurrentThreadId(), "a callback ran on another thread than DoWork's");
    OK("DoWork: ENUM_HOSTS_RESPONSE and ASYNC_OP_COMPLETE on the game's own thread");
    IDirectPlay8Address_Release(to);
    IDirectPlay8Address_Release(device);
    CHECK_HR(IDirectPlay8Peer_Close(peer, 0), "Peer::Close");
    IDirectPlay8Peer_Release(peer);
    CHECK_HR(IDirectPlay8ThreadPool_Close(pool, 0), "ThreadPool::Close");
    IDirectPlay8ThreadPool_Release(pool);
    return 0;
}
