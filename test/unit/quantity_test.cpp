// Kubernetes quantities, as the operator declares resources.accelerator and interface.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "mdadmit/rules/quantity.hpp"

namespace mdadmit::test {
namespace {

using rules::Quantity;

std::optional<std::int64_t> count(std::string_view text) {
    const auto q = Quantity::parse(text);
    EXPECT_TRUE(q.has_value()) << text;
    return q ? q->whole_count() : std::nullopt;
}

TEST(Quantity, WholeValuesInEveryNotationCount) {
    EXPECT_EQ(count("1"), 1);
    EXPECT_EQ(count("+2"), 2);
    EXPECT_EQ(count("2000m"), 2);
    EXPECT_EQ(count("1.0"), 1);
    EXPECT_EQ(count("1."), 1);
    EXPECT_EQ(count("2k"), 2000);
    EXPECT_EQ(count("1e3"), 1000);
    EXPECT_EQ(count("1E+3"), 1000);
    EXPECT_EQ(count("15e-1"), std::nullopt);
    EXPECT_EQ(count("20e-1"), 2);
    EXPECT_EQ(count("1Ki"), 1024);
    EXPECT_EQ(count("0.5Ki"), 512);
    EXPECT_EQ(count("0"), 0);
    EXPECT_EQ(count("-0"), 0);
    EXPECT_EQ(count("00008"), 8);
    EXPECT_EQ(count("-3"), -3);
    EXPECT_EQ(count("1E"), 1'000'000'000'000'000'000);
}

TEST(Quantity, FractionsAreHeldExactlyButCountNothing) {
    for (const char* text : {"1500m", "1.5", ".5", "0.001", "1n", "3u"}) {
        const auto q = Quantity::parse(text);
        ASSERT_TRUE(q.has_value()) << text;
        EXPECT_FALSE(q->whole()) << text;
        EXPECT_EQ(q->whole_count(), std::nullopt) << text;
        EXPECT_EQ(q->text(), text);
    }
}

TEST(Quantity, FinerThanNanoRoundsUpAsKubernetesDoes) {
    // 0.1n is a sliver of a card, never zero.
    const auto sliver = Quantity::parse("0.1n");
    ASSERT_TRUE(sliver.has_value());
    EXPECT_FALSE(sliver->is_zero());
    EXPECT_TRUE(sliver->same_value(*Quantity::parse("1n")));
    EXPECT_FALSE(Quantity::parse("1.0000000001")->whole());
}

TEST(Quantity, ValuesBeyondInt64AreWholeButUncounted) {
    EXPECT_EQ(count("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(count("9223372036854775808"), std::nullopt);
    EXPECT_TRUE(Quantity::parse("1e30")->whole());
    EXPECT_EQ(count("1e999999999999"), std::nullopt);
    EXPECT_EQ(count("16Ei"), std::nullopt);
    EXPECT_EQ(count("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(Quantity::of(std::numeric_limits<std::int64_t>::min()).whole_count(),
              std::numeric_limits<std::int64_t>::min());
}

TEST(Quantity, AnIntegerIsTheQuantityOfItsDecimalText) {
    constexpr auto min = std::numeric_limits<std::int64_t>::min();
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    for (const std::int64_t value :
         {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{8}, std::int64_t{10},
          std::int64_t{-300}, std::int64_t{1024}, std::int64_t{1000000}, std::int64_t{120034000},
          min, min + 1, max, max - 1, std::int64_t{-9000000000000000000}}) {
        const auto read = Quantity::parse(std::to_string(value));
        ASSERT_TRUE(read.has_value()) << value;
        EXPECT_EQ(Quantity::of(value), *read) << value;
        EXPECT_EQ(Quantity::of(value).whole_count(), value);
        EXPECT_EQ(Quantity::of(value).text(), std::to_string(value));
    }
}

TEST(Quantity, MalformedTextIsRefused) {
    for (const char* text : {"", "two", "1.5.0", "1e1.5", "1 k", "k", ".", "-", "1ki", "1KI", "1e",
                             "1Ki2", "0x10", " 1", "1,5"}) {
        EXPECT_FALSE(Quantity::parse(text).has_value()) << '"' << text << '"';
    }
    EXPECT_FALSE(Quantity::parse(std::string(65, '1')).has_value());
}

TEST(Quantity, EqualValuesHoweverWritten) {
    const auto one = Quantity::of(1);
    for (const char* text : {"1", "1000m", "1.0", "+1", "0.001k", "1e0"}) {
        EXPECT_TRUE(one.same_value(*Quantity::parse(text))) << text;
    }
    EXPECT_TRUE(Quantity::parse("1Ki")->same_value(Quantity::of(1024)));
    EXPECT_FALSE(one.same_value(*Quantity::parse("-1")));
    EXPECT_FALSE(one.same_value(*Quantity::parse("1500m")));
}

TEST(Quantity, ComparesExactly) {
    const auto q = [](const char* text) { return *Quantity::parse(text); };
    EXPECT_EQ(q("8500m").compare(q("8")), 1);
    EXPECT_EQ(q("1500m").compare(q("8")), -1);
    EXPECT_EQ(q("8").compare(q("8000m")), 0);
    EXPECT_EQ(q("9").compare(q("10")), -1);
    EXPECT_EQ(q("-2").compare(q("1")), -1);
    EXPECT_EQ(q("-2").compare(q("-1")), -1);
    EXPECT_EQ(q("0").compare(q("-0")), 0);
    EXPECT_EQ(q("1Ki").compare(q("1k")), 1);
    EXPECT_EQ(q("0.15").compare(q("0.151")), -1);
}

}  // namespace
}  // namespace mdadmit::test
