// RecyclingAllocator: single nodes freed are reused on the freeing thread, bounded; arrays and
// other threads' lists are left alone.
#include "common/recycling_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <thread>
#include <unordered_map>
#include <vector>

// Counts this thread's calls to operator new while `t_counting` is set (the map test below).
namespace {
thread_local bool t_counting = false;
thread_local long t_news = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (t_counting) ++t_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace weft {
namespace {

struct Node {
  long a[6];
};

TEST(RecyclingAllocator, AFreedNodeIsTheNextOneAllocatedOnThatThread) {
  if (!RecyclingAllocator<Node>::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  std::thread([] {  // a fresh thread: this one's list may be full from another test
    RecyclingAllocator<Node> alloc;
    const size_t before = RecyclingAllocator<Node>::kept();
    Node* p = alloc.allocate(1);
    alloc.deallocate(p, 1);
    EXPECT_EQ(RecyclingAllocator<Node>::kept(), before + 1);
    Node* q = alloc.allocate(1);
    EXPECT_EQ(q, p);
    EXPECT_EQ(RecyclingAllocator<Node>::kept(), before);
    alloc.deallocate(q, 1);
  })
      .join();
}

TEST(RecyclingAllocator, ArraysAreNotKept) {
  RecyclingAllocator<Node> alloc;
  const size_t before = RecyclingAllocator<Node>::kept();
  Node* p = alloc.allocate(8);
  alloc.deallocate(p, 8);
  EXPECT_EQ(RecyclingAllocator<Node>::kept(), before);
}

TEST(RecyclingAllocator, KeepsAtMostItsBoundAndFreesTheRest) {
  if (!RecyclingAllocator<Node>::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  using A = RecyclingAllocator<Node>;
  A alloc;
  std::vector<Node*> nodes;
  for (size_t i = 0; i < A::kKeep + 100; ++i) nodes.push_back(alloc.allocate(1));
  for (Node* p : nodes) alloc.deallocate(p, 1);
  EXPECT_EQ(A::kept(), A::kKeep);
}

TEST(RecyclingAllocator, ANodeFreedOnAnotherThreadGoesToThatThreadsList) {
  if (!RecyclingAllocator<Node>::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  using A = RecyclingAllocator<Node>;
  A alloc;
  const size_t here = A::kept();
  Node* p = alloc.allocate(1);
  size_t there_before = 0, there_after = 0;
  std::thread t([&] {
    there_before = A::kept();
    A().deallocate(p, 1);
    there_after = A::kept();
  });
  t.join();  // its list, and p with it, is freed as the thread ends (the leak pass checks)
  EXPECT_EQ(there_after, there_before + 1);
  EXPECT_EQ(A::kept(), here - (here > 0 ? 1 : 0));  // p came from this thread's list if any
}

TEST(RecyclingAllocator, AMapsErasedNodesServeItsNextInserts) {
  if (!RecyclingAllocator<Node>::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  using Pair = std::pair<const int, Node>;
  using Map =
      std::unordered_map<int, Node, std::hash<int>, std::equal_to<int>, RecyclingAllocator<Pair>>;
  Map m;
  for (int i = 0; i < 1000; ++i) m.emplace(i, Node{});
  m.clear();  // its 1,000 nodes go to this thread's list
  Map m2;
  t_news = 0;
  t_counting = true;
  for (int i = 0; i < 1000; ++i) m2.emplace(i, Node{{i}});
  t_counting = false;
  // Only the bucket arrays, as the table grows, come from operator new: about a dozen.
  EXPECT_LT(t_news, 50);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(m2.at(i).a[0], i);
}

}  // namespace
}  // namespace weft
