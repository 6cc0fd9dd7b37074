"""Issue bodies: code blocks and details blocks are the log; template prose is not."""

from cudalogs.issue import log_parts

BODY = """### Describe the bug
It crashes when I load the model.

```
Traceback (most recent call last):
RuntimeError: CUDA error: no kernel image is available for execution on the device
```

### Environment
<details><summary>collect_env</summary>

PyTorch version: 2.1.0+cu121
GPU 0: Tesla T4
</details>
"""


def test_blocks_are_kept_and_template_prose_dropped():
    text = log_parts(BODY)
    assert "RuntimeError: CUDA error: no kernel image" in text
    assert "GPU 0: Tesla T4" in text
    assert "Describe the bug" not in text


def test_a_body_without_blocks_is_the_log_itself():
    assert log_parts("RuntimeError: CUDA out of memory.") == "RuntimeError: CUDA out of memory."


def test_an_error_line_in_prose_is_kept():
    body = "I get `RuntimeError: CUDA error: device-side assert triggered` when training.\n\n```\npip list\n```\n"
    assert "device-side assert triggered" in log_parts(body)
