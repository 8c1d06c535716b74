// ota/static_pod_files: a static pod's manifest replaced as node-servant's OTA mode does, in temp
// directories, and never through something planted in the upgrade directory.
#include "ota/static_pod_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace yurthub::ota {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void spit(const fs::path& path, const std::string& content) { std::ofstream(path) << content; }

class StaticPodFiles : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ota-files-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directory(root_ / "manifests");
    dirs_.manifest_dir = (root_ / "manifests").string();
    dirs_.upgrade_dir = (root_ / "upgrade").string();
    spit(root_ / "manifests" / "yurthub.yaml", "old manifest\n");
    ::chmod((root_ / "manifests" / "yurthub.yaml").c_str(), 0640);
  }
  void TearDown() override { fs::remove_all(root_); }

  // The names in `dir`, so a leftover temporary file shows.
  static std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path root_;
  StaticPodDirs dirs_;
};

TEST_F(StaticPodFiles, BacksUpWritesTheUpgradeAndReplacesTheManifest) {
  ASSERT_TRUE(upgrade_static_pod_manifest(dirs_, "yurthub", "new manifest\n").ok());
  EXPECT_EQ(slurp(root_ / "manifests" / "yurthub.yaml"), "new manifest\n");
  EXPECT_EQ(slurp(root_ / "upgrade" / "yurthub.bak"), "old manifest\n");
  EXPECT_EQ(slurp(root_ / "upgrade" / "yurthub.upgrade"), "new manifest\n");
  EXPECT_EQ(names(root_ / "manifests"), std::vector<std::string>{"yurthub.yaml"});
  EXPECT_EQ(names(root_ / "upgrade"), (std::vector<std::string>{"yurthub.bak", "yurthub.upgrade"}));
  EXPECT_EQ(fs::status(root_ / "manifests" / "yurthub.yaml").permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read)
      << "the manifest keeps its mode";
  EXPECT_EQ(fs::status(root_ / "upgrade").permissions() & fs::perms::others_write, fs::perms::none);
}

TEST_F(StaticPodFiles, ASecondUpgradeReplacesTheEarlierFiles) {
  ASSERT_TRUE(upgrade_static_pod_manifest(dirs_, "yurthub", "v2\n").ok());
  ASSERT_TRUE(upgrade_static_pod_manifest(dirs_, "yurthub", "v3\n").ok());
  EXPECT_EQ(slurp(root_ / "manifests" / "yurthub.yaml"), "v3\n");
  EXPECT_EQ(slurp(root_ / "upgrade" / "yurthub.bak"), "v2\n");
}

TEST_F(StaticPodFiles, ASymlinkPlantedInTheUpgradeDirIsReplacedNotFollowed) {
  fs::create_directory(root_ / "upgrade");
  ::chmod((root_ / "upgrade").c_str(), 0755);
  spit(root_ / "victim", "precious\n");
  fs::create_symlink(root_ / "victim", root_ / "upgrade" / "yurthub.bak");
  fs::create_symlink(root_ / "victim", root_ / "upgrade" / "yurthub.upgrade");
  ASSERT_TRUE(upgrade_static_pod_manifest(dirs_, "yurthub", "new\n").ok());
  EXPECT_EQ(slurp(root_ / "victim"), "precious\n");
  EXPECT_FALSE(fs::is_symlink(root_ / "upgrade" / "yurthub.bak"));
  EXPECT_EQ(slurp(root_ / "upgrade" / "yurthub.bak"), "old manifest\n");
}

TEST_F(StaticPodFiles, AnUpgradeDirThatIsASymlinkIsRefused) {
  fs::create_directory(root_ / "elsewhere");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "upgrade");
  const Status result = upgrade_static_pod_manifest(dirs_, "yurthub", "new\n");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("not a symlink"), std::string::npos)
      << result.error().message;
  EXPECT_TRUE(fs::is_empty(root_ / "elsewhere"));
  EXPECT_EQ(slurp(root_ / "manifests" / "yurthub.yaml"), "old manifest\n");
}

TEST_F(StaticPodFiles, AnUpgradeDirOthersMayWriteIsRefused) {
  fs::create_directory(root_ / "upgrade");
  ::chmod((root_ / "upgrade").c_str(), 01777);
  const Status result = upgrade_static_pod_manifest(dirs_, "yurthub", "new\n");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("mode 1777"), std::string::npos) << result.error().message;
  EXPECT_EQ(slurp(root_ / "manifests" / "yurthub.yaml"), "old manifest\n");
}

TEST_F(StaticPodFiles, AnUpgradeDirOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  fs::create_directory(root_ / "upgrade");
  ::chmod((root_ / "upgrade").c_str(), 0755);
  ASSERT_EQ(::chown((root_ / "upgrade").c_str(), 65534, 65534), 0);
  const Status result = upgrade_static_pod_manifest(dirs_, "yurthub", "new\n");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("owned by uid 65534"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(slurp(root_ / "manifests" / "yurthub.yaml"), "old manifest\n");
}

TEST_F(StaticPodFiles, AMissingManifestFailsAndChangesNothingInKubeletsDir) {
  const Status result = upgrade_static_pod_manifest(dirs_, "other", "new\n");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("other.yaml"), std::string::npos);
  EXPECT_EQ(names(root_ / "manifests"), std::vector<std::string>{"yurthub.yaml"});
}

TEST_F(StaticPodFiles, ANameThatIsNotAFileNameIsRefused) {
  for (const char* name : {"", "../yurthub", "a/b", ".hidden", ".."}) {
    const Status result = upgrade_static_pod_manifest(dirs_, name, "new\n");
    EXPECT_FALSE(result.ok()) << name;
  }
  EXPECT_FALSE(fs::exists(root_ / "upgrade")) << "refused before anything is created";
  EXPECT_EQ(slurp(root_ / "manifests" / "yurthub.yaml"), "old manifest\n");
}

}  // namespace
}  // namespace yurthub::ota
