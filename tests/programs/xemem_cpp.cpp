// XEMEM from C++ through xpmem.h's C ABI: a std::vector exported, attached
// and changed through the attachment, N times; the same binary in an
// enclave and on Linux.  xemem_cpp N
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>
#include <xpmem.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 10;
	const size_t page = 4096, count = 64 * page / sizeof(long);

	for (long i = 0; i < n; i++) {
		// Page-aligned storage, as xpmem_make wants.
		std::vector<long> v(count + page / sizeof(long));
		long *base = reinterpret_cast<long *>(
			(reinterpret_cast<uintptr_t>(v.data()) + page - 1) & ~(page - 1));
		std::iota(base, base + count, i);
		xpmem_segid_t seg = xpmem_make(base, count * sizeof(long), XPMEM_PERMIT_MODE,
					       reinterpret_cast<void *>(0600));
		xpmem_apid_t apid = xpmem_get(seg, XPMEM_RDWR, XPMEM_PERMIT_MODE, nullptr);
		auto *p = static_cast<long *>(xpmem_attach(xpmem_addr{ apid, 0 }, count * sizeof(long),
							   nullptr));
		if (seg < 0 || apid < 0 || p == reinterpret_cast<long *>(-1)) {
			std::perror("xemem_cpp");
			return 1;
		}
		const long c = static_cast<long>(count);
		long sum = std::accumulate(p, p + count, 0L);
		p[7] = -1;	// the very same memory
		bool same = base[7] == -1 && sum == c * i + c * (c - 1) / 2;
		if (!same || xpmem_detach(p) || xpmem_release(apid) || xpmem_remove(seg)) {
			std::printf("xemem_cpp: FAIL in round %ld\n", i);
			return 1;
		}
	}
	std::printf("xemem_cpp: %ld rounds through xpmem.h from C++: ok\n", n);
	return 0;
}
