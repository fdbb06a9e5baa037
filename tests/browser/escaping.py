"""A program whose strings and names look like markup, for the report's escaping test."""

import minitorch as torch

BANNER = '<script>document.title = "pwned"</script><img src=x onerror="alert(1)">'


def attack_script_tag_and_quote_(x):
    print(BANNER, '"quoted" </pre>')  # printing breaks the graph; its reason may echo this
    return torch.sin(x) * 2


torch.compile(attack_script_tag_and_quote_)(torch.rand(4))
