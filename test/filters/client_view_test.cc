// What clients were sent, for watch corrections (filters/client_view.h): every view counts
// against one byte budget, so many clients cannot add up to many times it.
#include <gtest/gtest.h>

#include "filters/client_view.h"

namespace yurthub::filters {
namespace {

TEST(ClientViews, AllViewsShareOneBudget) {
  auto budget = std::make_shared<ClientView::Budget>();
  budget->limit = 1000;
  const std::string event(300, 'e');
  {
    ClientView a(budget), b(budget);
    a.put("ns/a1", event, ClientView::Seen::AsSent, 0, nullptr);
    a.put("ns/a2", event, ClientView::Seen::AsSent, 0, nullptr);
    b.put("ns/b1", event, ClientView::Seen::AsSent, 0, nullptr);
    EXPECT_EQ(budget->used.load(), 900u);
    EXPECT_FALSE(b.overflowed());
    b.put("ns/b2", event, ClientView::Seen::AsSent, 0, nullptr);  // 1200 > 1000: b gives up
    EXPECT_TRUE(b.overflowed());
    EXPECT_FALSE(a.overflowed());
    EXPECT_EQ(budget->used.load(), 600u);  // b's bytes went back
    a.put("ns/a1", std::string(100, 'e'), ClientView::Seen::AsSent, 0, nullptr);  // shrinks
    EXPECT_EQ(budget->used.load(), 400u);
    a.erase("ns/a2");
    EXPECT_EQ(budget->used.load(), 100u);
  }
  EXPECT_EQ(budget->used.load(), 0u);  // views gone, budget free
}

TEST(ClientViews, TheLeastRecentlyUsedViewGoesAndItsBytesWithIt) {
  ClientViews views;
  auto first = views.get("kube-proxy /apis/discovery.k8s.io/v1/endpointslices");
  EXPECT_EQ(views.get("kube-proxy /apis/discovery.k8s.io/v1/endpointslices"), first);
  for (std::size_t i = 0; i < ClientViews::kMaxViews; ++i) views.get("other " + std::to_string(i));
  EXPECT_NE(views.get("kube-proxy /apis/discovery.k8s.io/v1/endpointslices"), first);
}

}  // namespace
}  // namespace yurthub::filters
