// What a role may reach on its node and in its Pod: host access, topology, and the paths and
// settings the operator keeps for a model served from an artifact.
#include <algorithm>
#include <array>

#include "rule_context.hpp"
#include "text_syntax.hpp"

namespace mdadmit::rules {

namespace {

constexpr std::size_t label_name_limit = 63;
constexpr std::size_t subdomain_limit = 253;
constexpr std::string_view hostname_label = "kubernetes.io/hostname";

// Whether `outer` is `inner` or one of its parent directories, segment by segment
// (`/var/lib/gpustack` encloses `/var/lib/gpustack/model`, not `/var/lib/gpustack-x`).
bool encloses(std::string_view outer, std::string_view inner) {
    outer = without_trailing_slash(outer);
    inner = without_trailing_slash(inner);
    if (outer.empty() || inner.empty()) {
        return false;
    }
    if (outer == "/" || outer == inner) {
        return true;
    }
    return inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '/';
}

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A label name: up to 63 characters of [A-Za-z0-9-_.], alphanumeric at both ends.
bool is_label_name(std::string_view name) {
    return !name.empty() && name.size() <= label_name_limit && is_alnum(name.front()) &&
           is_alnum(name.back()) && std::all_of(name.begin(), name.end(), [](char c) {
               return is_alnum(c) || c == '-' || c == '_' || c == '.';
           });
}

// A DNS-1123 subdomain: DNS-1123 labels joined by dots.
bool is_dns_subdomain(std::string_view name) {
    if (name.empty() || name.size() > subdomain_limit) {
        return false;
    }
    for (std::size_t start = 0;;) {
        const std::size_t end = name.find('.', start);
        if (!is_dns1123_label(name.substr(start, end - start))) {
            return false;
        }
        if (end == std::string_view::npos) {
            return true;
        }
        start = end + 1;
    }
}

// A qualified name, as Kubernetes label keys are: an optional DNS subdomain and '/', then a
// label name.
bool is_qualified_name(std::string_view key) {
    const std::size_t slash = key.find('/');
    if (slash == std::string_view::npos) {
        return is_label_name(key);
    }
    return key.find('/', slash + 1) == std::string_view::npos &&
           is_dns_subdomain(key.substr(0, slash)) && is_label_name(key.substr(slash + 1));
}

void topology(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const auto& level = role.role->topology_required_level;
        if (!level || level->empty()) {
            continue;
        }
        const std::string path = role.path() + ".topology.requiredLevel";
        if (!is_qualified_name(*level)) {
            sink.report(
                RuleId::topology, path,
                code(*level) + " on role " + code(role.role->name) + " is not a topology label key",
                "name a node label key, e.g. topology.kubernetes.io/zone");
        } else if (*level == hostname_label) {
            sink.report(RuleId::topology, path,
                        std::string(hostname_label) +
                            " cannot be required: a replica's members are not kept on one Node",
                        "remove requiredLevel, or name a wider level such as a rack or zone label");
        }
    }
}

// Where a hostPath volume reaches on the node: its path and a subPath below it; "" when that
// cannot be known from the object (a `..` segment, an empty path, a subPathExpr the kubelet
// expands). What cannot be known is neither held nor covered.
std::string host_reach(const Volume& volume) {
    static const std::string none;
    const std::string_view path =
        without_trailing_slash(volume.host_path ? *volume.host_path : none);
    const std::string_view sub_path = volume.sub_path ? *volume.sub_path : none;
    if (path.empty() || has_parent_segment(path) || has_parent_segment(sub_path) ||
        (volume.sub_path_expr && !volume.sub_path_expr->empty())) {
        return {};
    }
    std::string reach(path);
    if (!sub_path.empty()) {
        reach += (reach == "/" ? "" : "/") + std::string(sub_path);
    }
    return reach;
}

// The host paths a stored role already reaches, and whether each is writable.
struct HeldPath {
    std::string reach;
    bool read_only = false;
};

std::vector<HeldPath> held_host_paths(const Role* stored) {
    std::vector<HeldPath> out;
    if (stored == nullptr) {
        return out;
    }
    for (const auto& volume : stored->additional_volumes) {
        if (volume.host_path) {
            if (std::string reach = host_reach(volume); !reach.empty()) {
                out.push_back({std::move(reach), volume.read_only});
            }
        }
    }
    return out;
}

// Host access a stored role already held is kept: the same or a wider path, no less
// read-only.
bool host_path_held(const std::vector<HeldPath>& held, const Volume& wanted) {
    const std::string reach = host_reach(wanted);
    return std::any_of(held.begin(), held.end(), [&](const HeldPath& h) {
        return encloses(h.reach, reach) && (!h.read_only || wanted.read_only);
    });
}

void host_access(const RuleContext& ctx, FindingSink& sink) {
    const Settings& settings = ctx.data.settings;
    for (const auto& role : ctx.facts.roles) {
        const RoleFacts* stored_facts = ctx.stored(role.role->name);
        const Role* stored = stored_facts != nullptr ? stored_facts->role : nullptr;
        if (role.role->privileged && !settings.privileged_allowed &&
            !(stored != nullptr && stored->privileged)) {
            sink.report(RuleId::host_access, role.path() + ".privileged",
                        "role " + code(role.role->name) + " asks for privileged mode, which is off",
                        "remove privileged, or allow it with the privilegedAllowed setting");
        }
        if (settings.host_path_volume_allowed) {
            continue;
        }
        const std::vector<HeldPath> held = held_host_paths(stored);
        const auto& volumes = role.role->additional_volumes;
        for (std::size_t k = 0; k < volumes.size(); ++k) {
            if (volumes[k].host_path && !host_path_held(held, volumes[k])) {
                sink.report(RuleId::host_access,
                            role.path() + ".additionalVolumes[" + std::to_string(k) + "].hostPath",
                            "role " + code(role.role->name) + " mounts host path " +
                                code(*volumes[k].host_path) + "; host paths are off",
                            "use another volume source, or allow host paths with the "
                            "hostPathVolumeAllowed setting");
            }
        }
    }
}

void artifact_ref(const RuleContext& ctx, FindingSink& sink) {
    if (!ctx.model.artifact_name) {
        return;
    }
    const ArtifactOwned& artifact = ctx.data.artifact;
    const FlagSpelling spelling = ctx.data.spelling(ctx.model.engine);
    constexpr const char* why =
        " is set by the operator while spec.model.artifactRef names the weights";
    for (const auto& role : ctx.facts.roles) {
        if (!role.role->takes_over()) {
            for (const auto& flag : role.args.flags()) {
                const auto owned = std::find_if(
                    artifact.args.begin(), artifact.args.end(), [&](const OwnedArg& a) {
                        return (!a.engine || *a.engine == ctx.model.engine) &&
                               spells(flag.name, a.flag, a.shortest_prefix, spelling);
                    });
                if (owned != artifact.args.end()) {
                    sink.report(RuleId::artifact_ref, role.arg_path(flag.flag_index),
                                code(std::string(flag.name)) + why + ": " + owned->reason,
                                "remove it, or take the role over with `command`");
                }
            }
            const auto& env = role.role->env;
            for (std::size_t k = 0; k < env.size(); ++k) {
                if (artifact.env.owns(ctx.model.engine, env[k].name)) {
                    sink.report(RuleId::artifact_ref,
                                role.path() + ".env[" + std::to_string(k) + "]",
                                code(env[k].name) + why + " and reaches them with its credential",
                                "remove it, or take the role over with `command`");
                }
            }
        }
        // The weights are mounted on every role, take-over roles included.
        const auto& volumes = role.role->additional_volumes;
        for (std::size_t k = 0; k < volumes.size(); ++k) {
            if (!volumes[k].mount_path || volumes[k].mount_path->empty()) {
                continue;
            }
            const std::string_view mount = *volumes[k].mount_path;
            for (const auto& reserved : artifact.mount_paths) {
                if (encloses(mount, reserved) || encloses(reserved, mount)) {
                    sink.report(
                        RuleId::artifact_ref,
                        role.path() + ".additionalVolumes[" + std::to_string(k) + "].mountPath",
                        code(mount) + " overlaps " + code(reserved) +
                            ", where the operator mounts the artifact's weights",
                        "mount the volume elsewhere, e.g. under /data");
                    break;
                }
            }
        }
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::topology, topology},
    RuleDefinition{RuleId::host_access, host_access},
    RuleDefinition{RuleId::artifact_ref, artifact_ref},
};

}  // namespace

std::span<const RuleDefinition> access_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
